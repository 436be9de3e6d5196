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

/**
 * The answers of a dereferenced document whose content has no example at all (neither `example` nor named
 * `examples` on the media type): what Prism's mock would have to make up from the schema.
 */
export function answersWithoutExamples(doc: Json): string[] {
  const missing: string[] = [];
  for (const [path, item] of Object.entries(isObject(doc.paths) ? doc.paths : {})) {
    if (!isObject(item)) continue;
    for (const [method, op] of Object.entries(item)) {
      if (!isObject(op) || method === 'parameters' || !isObject(op.responses)) continue;
      for (const [status, response] of Object.entries(op.responses)) {
        if (!isObject(response) || !isObject(response.content)) continue;
        for (const [type, media] of Object.entries(response.content)) {
          if (isObject(media) && !('example' in media) && !isObject(media.examples)) missing.push(`${String(op.operationId)} ${status} ${type} (${method.toUpperCase()} ${path})`);
        }
      }
    }
  }
  return missing;
}

/** Every example value of a dereferenced document with where it is (as findInvalidExamples walks them). */
export function exampleValues(doc: Json): { where: string; value: unknown }[] {
  const found: { where: string; value: unknown }[] = [];
  const seen = new Set<unknown>();
  const walk = (node: unknown, where: string) => {
    if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${where}[${i}]`));
    if (!isObject(node) || seen.has(node)) return;
    seen.add(node);
    for (const [key, value] of Object.entries(node)) {
      if (key === 'example') found.push({ where: `${where}.example`, value });
      else if (key === 'examples' && Array.isArray(value)) value.forEach((v, i) => found.push({ where: `${where}.examples[${i}]`, value: v }));
      else if (key === 'examples' && isObject(value)) {
        for (const [name, ex] of Object.entries(value)) if (isObject(ex) && 'value' in ex) found.push({ where: `${where}.examples.${name}`, value: ex.value });
      } else walk(value, `${where}.${key}`);
    }
  };
  walk(doc.paths, 'paths');
  walk(doc.components, 'components');
  return found;
}

export interface SeedUser {
  username: string;
  email: string;
  name: string;
  bio?: string;
  secondary_emails?: string[];
}

/**
 * Where an example shows one of the seed's users otherwise than the seed has them: an object describing the user
 * (naming them by `username`, `nickname`, `preferred_username` or `login`, with an `email`, a `web_url` or such) whose `name`, `email` or `bio` differ, or whose `id` or
 * `sub` is not the user's place in the seed (ids are given in the seed's order, from 1).
 */
export function seedUserMismatches(doc: Json, users: readonly SeedUser[]): string[] {
  const problems: string[] = [];
  const byName = new Map(users.map((u, i) => [u.username, { ...u, id: i + 1 }]));
  const check = (node: unknown, where: string) => {
    if (Array.isArray(node)) return node.forEach((n, i) => check(n, `${where}[${i}]`));
    if (!isObject(node)) return;
    const named = ['username', 'nickname', 'preferred_username', 'login'].map((k) => node[k]).find((v) => typeof v === 'string' && byName.has(v));
    const user = typeof named === 'string' ? byName.get(named) : undefined;
    // Only an object that describes the user (not, say, a token or a message naming them) has their name and id.
    const describesUser = ['email', 'nickname', 'preferred_username', 'state', 'web_url'].some((k) => k in node);
    if (user && describesUser) {
      if ('name' in node && node.name !== user.name) problems.push(`${where}: ${user.username} is named ${JSON.stringify(node.name)}, the seed says ${user.name}`);
      if ('email' in node && node.email !== user.email) problems.push(`${where}: ${user.username}'s email is ${JSON.stringify(node.email)}, the seed says ${user.email}`);
      if ('bio' in node && node.bio !== (user.bio ?? '')) problems.push(`${where}: ${user.username}'s bio is ${JSON.stringify(node.bio)}, the seed says ${JSON.stringify(user.bio ?? '')}`);
      if ('id' in node && 'username' in node && node.id !== user.id) problems.push(`${where}: ${user.username}'s id is ${JSON.stringify(node.id)}, the seed gives ${user.id}`);
      if ('sub' in node && node.sub !== String(user.id)) problems.push(`${where}: ${user.username}'s sub is ${JSON.stringify(node.sub)}, the seed gives ${user.id}`);
    }
    for (const [key, value] of Object.entries(node)) check(value, `${where}.${key}`);
  };
  for (const { where, value } of exampleValues(doc)) check(value, where);
  return problems;
}
