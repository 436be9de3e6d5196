// HEAD is answered wherever GET is (RFC 9110 section 9.3.2), over real HTTP: every GET of the document, the pages,
// the documents and the operations endpoints answer a HEAD with the GET's status and headers and no body.
import http from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { document } from '../../src/openapi/document.js';
import { seed, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

/** One request, its status, content type and the bytes of its body as received. */
function request(method: 'GET' | 'HEAD', path: string, headers: Record<string, string>): Promise<{ status: number; type: string | undefined; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${server.baseUrl}${path}`, { method, headers }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => resolve({ status: res.statusCode!, type: res.headers['content-type'], bytes }));
    });
    req.on('error', reject);
    req.end();
  });
}

it('answers a HEAD as the GET of every path the document declares a GET for, and more, without a body', async () => {
  const declared = Object.entries(document.paths as Record<string, Record<string, unknown>>)
    .filter(([, item]) => item.get !== undefined)
    .map(([template]) => template.replace('{id}', 'acme%2Fwidgets').replace(/\{[^}]+\}/g, '1'));
  expect(declared.length).toBeGreaterThan(20);
  const paths = [...declared, '/', '/users/sign_in', '/assets/tokenbell.css', '/favicon.ico', '/help/api', '/openapi.yaml', '/-/health', '/-/readiness', '/no/such/page'];
  for (const path of paths) {
    for (const headers of [{}, { 'private-token': seed.jsmith.pat }] as Record<string, string>[]) {
      const get = await request('GET', path, headers);
      const head = await request('HEAD', path, headers);
      expect({ status: head.status, type: head.type }, `HEAD ${path}`).toEqual({ status: get.status, type: get.type });
      expect(head.bytes, `HEAD ${path}`).toBe(0);
      expect(head.status, `HEAD ${path}`).not.toBe(405);
    }
  }
});
