// What the per-request savings of issue 20 must not change: refusals are still their classes and still answered in
// full, only without a captured stack; only no-store answers lose their ETag.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import express, { type ErrorRequestHandler } from 'express';
import { error as validatorErrors } from 'express-openapi-validator';
import { HttpError } from '../../src/http/errors.js';
import { openApiValidation } from '../../src/http/openapi-validation.js';
import { OAuthError } from '../../src/domain/oauth/errors.js';
import { seed, startTestServer, type TestServer } from '../support/server.js';

const frames = (error: Error) => (error.stack ?? '').split('\n').filter((line) => line.trimStart().startsWith('at ')).length;

describe('expected refusals', () => {
  it('capture no stack below 500, keep one from 500, and stay what they are', () => {
    const refusals = [new HttpError(401, '401 Unauthorized'), new OAuthError('invalid_client', 'no'), new OAuthError('invalid_grant', 'no')];
    for (const refusal of refusals) {
      expect(refusal).toBeInstanceOf(Error);
      expect(frames(refusal)).toBe(0);
    }
    expect(refusals[0]).toBeInstanceOf(HttpError);
    expect(refusals[1]).toBeInstanceOf(OAuthError);
    expect(frames(new HttpError(500, 'broken'))).toBeGreaterThan(0);
    expect(frames(new OAuthError('invalid_request', 'broken', { status: 500 }))).toBeGreaterThan(0);
    // The limit is put back: errors made afterwards have their stacks.
    expect(frames(new Error('later'))).toBeGreaterThan(0);
  });
});

describe("the validator's refusals", () => {
  it('capture no stack either, stay its classes, and are answered as before', async () => {
    const caught: Error[] = [];
    const app = express()
      .use(express.json())
      .use(openApiValidation({ validateResponses: false }))
      .use(((error: Error & { status: number }, _req, res, _next) => {
        caught.push(error);
        res.status(error.status).json({ message: error.message });
      }) as ErrorRequestHandler);
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    try {
      const answer = await fetch(`http://127.0.0.1:${port}/api/v3/notification_settings`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"level":"bogus"}' });
      expect(answer.status).toBe(400);
      expect(((await answer.json()) as { message: string }).message).toMatch(/level must be equal to one of the allowed values/);
      expect((await fetch(`http://127.0.0.1:${port}/api/v3/notification_settings`, { method: 'DELETE' })).status).toBe(405);
    } finally {
      server.close();
    }
    expect(caught[0]).toBeInstanceOf(validatorErrors.BadRequest);
    expect(caught[1]).toBeInstanceOf(validatorErrors.MethodNotAllowed);
    for (const refusal of caught) expect(frames(refusal)).toBe(0);
    expect(frames(new Error('later'))).toBeGreaterThan(0);
  });
});

describe('ETags', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it('are not sent with no-store answers, API and OAuth, successes and refusals', async () => {
    const answers = [
      await fetch(`${server.baseUrl}/api/v4/user`, { headers: { 'PRIVATE-TOKEN': seed.jsmith.pat } }),
      await fetch(`${server.baseUrl}/api/v4/user`),
      await fetch(`${server.baseUrl}/oauth/introspect`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${seed.client.id}:${seed.client.secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'token=unknown',
      }),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 401, 200]);
    for (const answer of answers) {
      expect(answer.headers.get('cache-control')).toBe('no-store');
      expect(answer.headers.get('etag')).toBeNull();
    }
  });

  it('are still sent with answers that may be kept', async () => {
    const metadata = await fetch(`${server.baseUrl}/.well-known/oauth-authorization-server`);
    expect(metadata.headers.get('cache-control')).toBeNull();
    expect(metadata.headers.get('etag')).toMatch(/^W\/"/);
  });
});
