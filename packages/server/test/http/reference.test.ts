// The API reference and the documents it reads are large and public: compressed for a client that accepts it. An
// answer that carries a token never is (compressed beside what a request reflects, its length would leak it: BREACH).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { request } from 'node:http';
import { startTestServer, type TestServer, seed, form } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** The raw answer's encoding and length on the wire: fetch would decode it out of sight. */
const onTheWire = (path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) =>
  new Promise<{ status: number; encoding: string | undefined; bytes: number }>((resolve, reject) => {
    const url = new URL(path, server.baseUrl);
    const req = request(url, { method: init.method ?? 'GET', headers: { 'accept-encoding': 'gzip, br', ...init.headers } }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => resolve({ status: res.statusCode!, encoding: res.headers['content-encoding'], bytes }));
    });
    req.on('error', reject);
    req.end(init.body);
  });

it("compresses the reference's Swagger UI and the documents", async () => {
  const plain = await onTheWire('/assets/reference/swagger-ui-bundle.js', { headers: { 'accept-encoding': 'identity' } });
  const bundle = await onTheWire('/assets/reference/swagger-ui-bundle.js');
  expect(plain).toMatchObject({ status: 200, encoding: undefined });
  expect(bundle.encoding).toMatch(/^(gzip|br)$/);
  expect(bundle.bytes).toBeLessThan(plain.bytes / 3);
  // The page itself is under a kilobyte: compression's threshold leaves it as it is.
  for (const path of ['/openapi.json', '/openapi.yaml', '/assets/reference/swagger-ui.css']) expect((await onTheWire(path)).encoding ?? 'none', path).toMatch(/^(gzip|br)$/);
});

it('never compresses an answer with a token in it', async () => {
  const { body } = form({ grant_type: 'password', username: seed.jsmith.username, password: seed.jsmith.password });
  const token = await onTheWire('/oauth/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
  expect(token).toMatchObject({ status: 200, encoding: undefined });
  expect((await onTheWire('/api/v4/user')).encoding).toBeUndefined();
});
