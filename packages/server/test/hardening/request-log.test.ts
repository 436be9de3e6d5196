// The request log of the real CLI (JSON lines, as under a process manager) after a whole flow: every request has one
// line with its id, method, path, route, status and duration, the id comes back as X-Request-Id, and no password,
// token, code, secret or cookie value appears anywhere in the output.
import { afterAll, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { Agent, consentFields, signIn } from '../support/agent.js';
import { seed } from '../support/server.js';
import { cliStore, exampleSeed, startCli, stopCli, type CliProcess } from './support.js';

let cli: CliProcess | undefined;
let store: Awaited<ReturnType<typeof cliStore>> | undefined;
afterAll(async () => {
  if (cli) await stopCli(cli, 'SIGTERM');
  await store?.drop();
});

it('logs one JSON line per request with its id, and never a secret', async () => {
  store = await cliStore(['--memory']);
  cli = await startCli([...store.args, '--seed', exampleSeed]);
  const base = cli.baseUrl;
  const secrets: string[] = [seed.jsmith.password, seed.jsmith.pat, seed.client.secret];
  const form = (fields: Record<string, string>) => ({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) });

  // The browser flow: sign-in, consent with PKCE, the code, its exchange, a refresh.
  const agent = new Agent(base);
  expect((await signIn(agent, 'jsmith', seed.jsmith.password)).status).toBe(302);
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const state = randomBytes(16).toString('base64url');
  const query = new URLSearchParams({ client_id: seed.client.id, redirect_uri: seed.redirectUri, response_type: 'code', state, code_challenge: challenge, code_challenge_method: 'S256' });
  const consent = await (await agent.get(`/oauth/authorize?${query.toString().replace(/\+/g, '%20')}`)).text();
  const approved = await agent.post('/oauth/authorize', { ...consentFields(consent), decision: 'approve' });
  const code = new URL(approved.headers.get('location')!).searchParams.get('code')!;
  const exchanged = (await (
    await fetch(`${base}/oauth/token`, form({ grant_type: 'authorization_code', code, redirect_uri: seed.redirectUri, client_id: seed.client.id, client_secret: seed.client.secret, code_verifier: verifier }))
  ).json()) as { access_token: string; refresh_token: string };
  const refreshed = (await (
    await fetch(`${base}/oauth/token`, form({ grant_type: 'refresh_token', refresh_token: exchanged.refresh_token, client_id: seed.client.id, client_secret: seed.client.secret }))
  ).json()) as { access_token: string; refresh_token: string };
  const password = (await (await fetch(`${base}/oauth/token`, form({ grant_type: 'password', username: 'jsmith', password: seed.jsmith.password }))).json()) as { access_token: string };
  secrets.push(verifier, state, code, exchanged.access_token, exchanged.refresh_token, refreshed.access_token, refreshed.refresh_token, password.access_token);
  secrets.push(...[...agent.cookies.values()].map((v) => decodeURIComponent(v).replace(/^s:/, '').split('.')[0]!));

  // The three ways to call the API, and the token endpoints that take a token.
  const viaQuery = await fetch(`${base}/api/v3/user?access_token=${refreshed.access_token}`);
  expect(viaQuery.status).toBe(200);
  const requestId = viaQuery.headers.get('x-request-id');
  expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
  await fetch(`${base}/api/v3/notification_settings`, { headers: { authorization: `Bearer ${password.access_token}` } });
  await fetch(`${base}/api/v3/notification_settings`, { headers: { 'private-token': seed.jsmith.pat } });
  await fetch(`${base}/oauth/token/info?access_token=${password.access_token}`);
  await fetch(`${base}/oauth/introspect`, form({ token: refreshed.access_token, client_id: seed.client.id, client_secret: seed.client.secret }));
  await fetch(`${base}/oauth/revoke`, form({ token: refreshed.refresh_token, client_id: seed.client.id, client_secret: seed.client.secret }));
  const given = await fetch(`${base}/-/health`, { headers: { 'x-request-id': 'from-the-proxy-42' } });
  expect(given.headers.get('x-request-id')).toBe('from-the-proxy-42');

  // pino writes as it goes; give the last lines a moment to arrive.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const output = cli.output();
  const lines = output.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, any>);
  const line = lines.find((l) => l.req?.id === requestId);
  expect(line).toMatchObject({ req: { method: 'GET', url: '/api/v3/user?access_token=[redacted]' }, route: '/api/v3/user', res: { statusCode: 200 }, msg: 'request completed' });
  expect(typeof line?.responseTime).toBe('number');
  expect(lines.some((l) => l.req?.id === 'from-the-proxy-42')).toBe(true);
  expect(lines.length).toBeGreaterThanOrEqual(14);
  for (const secret of secrets) expect(output, `a secret of ${secret.length} characters is in the log`).not.toContain(secret);
});
