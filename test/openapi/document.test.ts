import SwaggerParser from '@apidevtools/swagger-parser';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { generateTypes } from '../../scripts/lib/generate-types.js';
import { answersWithoutExamples, findInvalidExamples, seedUserMismatches, type SeedUser } from '../../scripts/lib/openapi-examples.js';
import { generatedTypesPath, openapiPath, repoRoot } from '../../scripts/lib/paths.js';

const run = promisify(execFile);
type Json = Record<string, any>;

describe('openapi/openapi.yaml', () => {
  it('parses, bundles and validates as OpenAPI 3.1', async () => {
    const api = (await SwaggerParser.validate(openapiPath)) as Json;
    expect(api.openapi).toMatch(/^3\.1\./);
    expect(api.jsonSchemaDialect).toBe('https://json-schema.org/draft/2020-12/schema');
    const bundled = (await SwaggerParser.bundle(openapiPath)) as Json;
    expect(Object.keys(bundled.paths).length).toBeGreaterThan(10);
  });

  /** Spectral's findings for a document, and its exit code (1 when an error-severity finding exists). */
  async function spectral(document: string): Promise<{ code: number; findings: { severity: number; message: string; path: string[] }[] }> {
    const args = ['spectral', 'lint', document, '--ruleset', '.spectral.yaml', '--fail-severity', 'error', '-f', 'json', '-q'];
    const result = await run('npx', args, { cwd: repoRoot }).then(
      (r) => ({ ...r, code: 0 }),
      (e: { stdout: string; stderr: string; code: number }) => e,
    );
    // Quiet JSON output is "[]" when there is nothing to say; no output at all means Spectral did not run.
    expect(result.stdout.trim(), result.stderr).not.toBe('');
    return { code: result.code, findings: JSON.parse(result.stdout) };
  }

  it("passes Spectral's spectral:oas ruleset with no errors", async () => {
    const { code, findings } = await spectral(openapiPath);
    expect(findings.filter((f) => f.severity === 0).map((f) => `${f.path.join('.')}: ${f.message}`)).toEqual([]);
    expect(code).toBe(0);
  }, 60_000);

  it('is checked by a Spectral run that does fail a broken document', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tokenbell-spectral-'));
    try {
      const broken = join(dir, 'broken.yaml');
      // An operation whose path parameter is not declared: an error under spectral:oas.
      await writeFile(broken, 'openapi: 3.1.0\ninfo: { title: t, version: "1" }\npaths:\n  /a/{id}:\n    get:\n      responses: { "200": { description: ok } }\n');
      const { code, findings } = await spectral(broken);
      expect(code).toBe(1);
      expect(findings.some((f) => f.severity === 0)).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('has only examples that validate against their schemas', async () => {
    const doc = (await SwaggerParser.dereference(openapiPath)) as Json;
    const { checked, problems } = findInvalidExamples(doc);
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });

  it('rejects a wrong example, so the example check can fail', () => {
    const doc = {
      paths: {},
      components: { schemas: { Level: { type: 'string', enum: ['watch'], examples: ['loud'] } } },
    };
    const { problems } = findInvalidExamples(doc);
    expect(problems.map((p) => p.where)).toEqual(['components.schemas.Level.examples[0]']);
  });

  it('gives every operation an operationId, a description and a documented success or redirect', async () => {
    const doc = (await SwaggerParser.dereference(openapiPath)) as Json;
    for (const [path, item] of Object.entries<Json>(doc.paths)) {
      for (const [method, op] of Object.entries<Json>(item)) {
        if (method === 'parameters') continue;
        expect(op.operationId, `${method} ${path}`).toBeTruthy();
        expect(op.description, `${method} ${path}`).toBeTruthy();
        expect(Object.keys(op.responses).some((s) => /^[23]/.test(s)), `${method} ${path}`).toBe(true);
      }
    }
  });
});

describe('the examples', () => {
  const seedPath = join(repoRoot, 'packages/server/fixtures/example-seed.json');

  it('give every answer with a body an example, so the mock never makes one up', async () => {
    const doc = (await SwaggerParser.dereference(openapiPath)) as Json;
    expect(answersWithoutExamples(doc)).toEqual([]);
  });

  it('name the global notification settings of every level the mock can show, custom with its events included', async () => {
    const doc = (await SwaggerParser.dereference(openapiPath)) as Json;
    for (const [path, method] of [['/api/v3/notification_settings', 'get'], ['/api/v3/notification_settings', 'put']] as const) {
      const examples = doc.paths[path][method].responses['200'].content['application/json'].examples as Json;
      expect(Object.keys(examples), `${method} ${path}`).toContain('custom');
      expect(examples.custom.value).toMatchObject({ level: 'custom', events: expect.any(Object) });
    }
  });

  it("show the example seed's users as the seed has them: names, e-mail addresses, ids", async () => {
    const doc = (await SwaggerParser.dereference(openapiPath)) as Json;
    const seed = JSON.parse(await readFile(seedPath, 'utf8')) as { users: SeedUser[] };
    expect(seedUserMismatches(doc, seed.users)).toEqual([]);
    // The user the mock answers for is the seed's first.
    const current = doc.paths['/api/v3/user'].get.responses['200'].content['application/json'].examples as Json;
    expect(Object.values(current)[0].value).toMatchObject({ id: 1, username: 'jsmith', name: seed.users[0]!.name, email: seed.users[0]!.email });
  });

  it('finds a user shown otherwise than the seed has them, so the check can fail', () => {
    const doc = { paths: { '/u': { get: { responses: { '200': { content: { 'application/json': { example: { id: 2, username: 'jsmith', name: 'John Smith', email: 'jsmith@example.com' } } } } } } } } };
    expect(seedUserMismatches(doc, [{ username: 'jsmith', name: 'Jane Smith', email: 'jsmith@example.com' }])).toEqual([
      'paths./u.get.responses.200.content.application/json.example: jsmith is named "John Smith", the seed says Jane Smith',
      "paths./u.get.responses.200.content.application/json.example: jsmith's id is 2, the seed gives 1",
    ]);
  });
});

describe('generated SDK types', () => {
  it('are up to date with the document (run npm run generate)', async () => {
    const current = await readFile(generatedTypesPath, 'utf8');
    expect(current === (await generateTypes()), `${generatedTypesPath} is stale`).toBe(true);
  });
});
