import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

type Json = Record<string, unknown>;

export interface ExampleProblem {
  where: string;
  errors: string;
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Every example in a dereferenced OpenAPI 3.1 document, checked against the schema it illustrates:
 * schema `examples` (nested schemas included), parameter and header `example`/`examples`, and media-type
 * `example`/`examples` of request bodies and responses.
 */
export function findInvalidExamples(doc: Json): { checked: number; problems: ExampleProblem[] } {
  const ajv = new Ajv2020.default({ strict: false, allErrors: true });
  addFormats.default(ajv);
  const problems: ExampleProblem[] = [];
  let checked = 0;

  const check = (schema: unknown, value: unknown, where: string) => {
    if (!isObject(schema) && typeof schema !== 'boolean') return;
    checked++;
    const validate = ajv.compile(schema as Json);
    if (!validate(value)) problems.push({ where, errors: ajv.errorsText(validate.errors) });
  };

  const seenSchemas = new Set<unknown>();
  const walkSchema = (schema: unknown, where: string) => {
    if (!isObject(schema) || seenSchemas.has(schema)) return;
    seenSchemas.add(schema);
    if (Array.isArray(schema.examples)) {
      schema.examples.forEach((ex, i) => check(schema, ex, `${where}.examples[${i}]`));
    }
    for (const key of ['oneOf', 'anyOf', 'allOf', 'prefixItems'] as const) {
      const list = schema[key];
      if (Array.isArray(list)) list.forEach((s, i) => walkSchema(s, `${where}.${key}[${i}]`));
    }
    for (const key of ['items', 'not', 'additionalProperties', 'propertyNames'] as const) {
      walkSchema(schema[key], `${where}.${key}`);
    }
    if (isObject(schema.properties)) {
      for (const [name, s] of Object.entries(schema.properties)) walkSchema(s, `${where}.properties.${name}`);
    }
  };

  // Parameters, headers and media types share the example/examples pair.
  const walkExampleHolder = (holder: unknown, where: string) => {
    if (!isObject(holder)) return;
    walkSchema(holder.schema, `${where}.schema`);
    if ('example' in holder) check(holder.schema, holder.example, `${where}.example`);
    if (isObject(holder.examples)) {
      for (const [name, ex] of Object.entries(holder.examples)) {
        if (isObject(ex) && 'value' in ex) check(holder.schema, ex.value, `${where}.examples.${name}`);
      }
    }
  };
  const walkContent = (content: unknown, where: string) => {
    if (!isObject(content)) return;
    for (const [type, media] of Object.entries(content)) walkExampleHolder(media, `${where}.content[${type}]`);
  };
  const walkResponse = (response: unknown, where: string) => {
    if (!isObject(response)) return;
    walkContent(response.content, where);
    if (isObject(response.headers)) {
      for (const [name, h] of Object.entries(response.headers)) walkExampleHolder(h, `${where}.headers.${name}`);
    }
  };

  const components = isObject(doc.components) ? doc.components : {};
  for (const [name, s] of Object.entries(isObject(components.schemas) ? components.schemas : {})) {
    walkSchema(s, `components.schemas.${name}`);
  }
  for (const [path, item] of Object.entries(isObject(doc.paths) ? doc.paths : {})) {
    if (!isObject(item)) continue;
    const shared = Array.isArray(item.parameters) ? item.parameters : [];
    shared.forEach((p, i) => walkExampleHolder(p, `paths[${path}].parameters[${i}]`));
    for (const [method, op] of Object.entries(item)) {
      if (!isObject(op) || method === 'parameters') continue;
      const where = `paths[${path}].${method}`;
      if (Array.isArray(op.parameters)) {
        op.parameters.forEach((p, i) => walkExampleHolder(p, `${where}.parameters[${i}]`));
      }
      if (isObject(op.requestBody)) walkContent(op.requestBody.content, `${where}.requestBody`);
      if (isObject(op.responses)) {
        for (const [status, r] of Object.entries(op.responses)) walkResponse(r, `${where}.responses[${status}]`);
      }
    }
  }
  return { checked, problems };
}
