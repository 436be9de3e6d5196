// `tokenbell users reset-password` and `users two-factor --on`, run as processes, end what the old credentials gave
// (ASVS V3.3.3): the user's browser sessions always, and with --revoke-tokens their OAuth and personal access tokens
// too, while other users keep theirs. On a data file, and in the `postgres` test project on a database.
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Agent, signIn } from '../support/agent.js';
import { cliStore, startCli, stopCli, tempDir, usersCommand as users } from './support.js';

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

const create = (where: string[], username: string, password: string) =>
  users(['create', ...where, '--username', username, '--email', `${username}@example.com`, '--name', username, '--password', password]);

/** What one user holds on a running server: a browser session, an OAuth token from the password grant, a PAT. */
async function holdings(baseUrl: string, username: string, password: string, pat: string) {
  const browser = new Agent(baseUrl);
  expect((await signIn(browser, username, password)).status).toBe(302);
  const grant = await fetch(`${baseUrl}/oauth/token`, { method: 'POST', body: new URLSearchParams({ grant_type: 'password', username, password }) });
  const { access_token: accessToken } = (await grant.json()) as { access_token: string };
  return { browser, accessToken, pat };
}

async function standing(baseUrl: string, held: Awaited<ReturnType<typeof holdings>>) {
  const page = await held.browser.get(`${baseUrl}/profile/personal_access_tokens`);
  const bearer = await fetch(`${baseUrl}/api/v3/user`, { headers: { authorization: `Bearer ${held.accessToken}` } });
  const personal = await fetch(`${baseUrl}/api/v3/user`, { headers: { 'private-token': held.pat } });
  return { session: page.status === 200, oauth: bearer.status === 200, pat: personal.status === 200 };
}

// Eleven processes, each loading the CLI through tsx.
it('end the sessions of the user whose password or second factor changed, and with --revoke-tokens their tokens', { timeout: 120_000 }, async () => {
  const store = await cliStore(['--data', join(dir.path, 'credentials.json')]);
  const where = store.args;
  try {
    for (const [name, password] of [['ana', 'a long first password'], ['bo', 'a long password of bo']] as const) expect((await create(where, name, password)).code).toBe(0);
    const pat = async (username: string) => (await users(['token', ...where, '--username', username, '--name', 'ci', '--scopes', 'read_user'])).output.trim().split('\n').at(-1)!;
    const pats = { ana: await pat('ana'), bo: await pat('bo') };

    let server = await startCli(where);
    let ana = await holdings(server.baseUrl, 'ana', 'a long first password', pats.ana);
    const bo = await holdings(server.baseUrl, 'bo', 'a long password of bo', pats.bo);
    await stopCli(server);

    const reset = await users(['reset-password', ...where, '--username', 'ana', '--password', 'a long second password']);
    expect(reset).toMatchObject({ code: 0, output: expect.stringContaining('set a new password for ana; ended 1 browser session') });
    server = await startCli(where);
    try {
      expect(await standing(server.baseUrl, ana)).toEqual({ session: false, oauth: true, pat: true });
      expect(await standing(server.baseUrl, bo)).toEqual({ session: true, oauth: true, pat: true });
      ana = await holdings(server.baseUrl, 'ana', 'a long second password', pats.ana);
    } finally {
      await stopCli(server);
    }

    const twoFactor = await users(['two-factor', ...where, '--username', 'ana', '--on', '--revoke-tokens']);
    expect(twoFactor).toMatchObject({ code: 0, output: expect.stringContaining('two-factor authentication is on for ana; ended 1 browser session and revoked 3 tokens') });
    server = await startCli(where);
    try {
      expect(await standing(server.baseUrl, ana)).toEqual({ session: false, oauth: false, pat: false });
      expect(await standing(server.baseUrl, bo)).toEqual({ session: true, oauth: true, pat: true });
    } finally {
      await stopCli(server);
    }
  } finally {
    await store.drop();
  }
});
