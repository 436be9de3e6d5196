// Debian's Python Authlib (package python3-authlib, run with /usr/bin/python3) as an OpenID Connect client configured
// for gitlab.com with only the base URL changed: discovery from server_metadata_url, the code flow with PKCE and a
// nonce, the id_token validated by Authlib against the published keys (signature, issuer, audience, expiry, nonce),
// and userinfo. The user's part runs through the real sign-in and consent pages.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, approveAuthorization, signIn } from '../../packages/server/test/support/agent.js';
import { exampleOidcApplication } from '../../packages/server/test/support/example-seed.js';
import { seed, startTestServer, type TestServer } from '../../packages/server/test/support/server.js';

const python = '/usr/bin/python3';
const session = fileURLToPath(new URL('./authlib_session.py', import.meta.url));

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

describe('Authlib (Debian python3-authlib)', () => {
  it('signs in with OpenID Connect, validates the id_token and reads userinfo', async () => {
    const child = spawn(python, [session, server.baseUrl, exampleOidcApplication.clientId, exampleOidcApplication.clientSecret, exampleOidcApplication.redirectUri], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const spawned = await Promise.race([once(child, 'spawn').then(() => true), once(child, 'error').then(() => false)]);
    if (!spawned) throw new Error(`${python} is required for this test; install python3-authlib (apt-get install python3-authlib), as .ci/run does.`);
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const exited = once(child, 'exit');
    const first = await lines.next();
    if (first.done) {
      await exited;
      throw new Error(`authlib_session.py printed nothing (is python3-authlib installed? apt-get install python3-authlib, as .ci/run does):\n${stderr}`);
    }
    const { url } = JSON.parse(first.value) as { url: string };
    expect(url.startsWith(`${server.baseUrl}/oauth/authorize?`)).toBe(true);

    const agent = new Agent(server.baseUrl);
    expect((await signIn(agent, seed.jsmith.username, seed.jsmith.password)).status).toBe(302);
    const approved = await approveAuthorization(agent, url);
    expect(approved.status).toBe(302);
    child.stdin.end(`${approved.headers.get('location')}\n`);

    const last = await lines.next();
    const [code] = await exited;
    if (last.done || code !== 0) throw new Error(`authlib_session.py failed (${code}):\n${stderr}`);
    const seen = JSON.parse(last.value) as { version: string; nonce: string; token_scope: string; claims: Record<string, unknown>; userinfo: Record<string, unknown> };
    console.log(`Authlib ${seen.version}`);
    expect(seen.token_scope).toBe('openid profile email');
    expect(seen.claims).toMatchObject({ iss: server.baseUrl, aud: exampleOidcApplication.clientId, nonce: seen.nonce, nickname: 'jsmith', email: 'jsmith@example.com', groups_direct: ['acme', 'opensource'] });
    expect(seen.userinfo).toMatchObject({ sub: seen.claims.sub, preferred_username: 'jsmith', email_verified: true, groups: ['acme', 'opensource'] });
  });
});
