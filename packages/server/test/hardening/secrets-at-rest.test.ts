// Every secret a full flow hands out, then a look at the data file (or, on PostgreSQL, at every row of the
// database): none of them may be there in plain text, so a copied data file, database or backup gives an attacker no
// credential to use.
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { journalFileOf } from '../../src/store/file/journal.js';
import { Agent, csrfOf } from '../support/agent.js';
import { seed, startTestServer, testStoreKind, type TestServer } from '../support/server.js';
import { tempDir } from './support.js';

let dir: Awaited<ReturnType<typeof tempDir>>;
let server: TestServer;
let baseUrl: string;

beforeAll(async () => {
  dir = await tempDir();
  // A real data file, or a fresh database in the `postgres` test project.
  server = await startTestServer(testStoreKind() === 'file' ? { file: join(dir.path, 'data.json') } : {});
  ({ baseUrl } = server);
});
afterAll(async () => {
  await server?.close();
  await dir.remove();
});

const inputValue = (page: string, id: string) => {
  const value = new RegExp(`id="${id}"[^>]*value="([^"]+)"`).exec(page)?.[1];
  if (!value) throw new Error(`no #${id} in the page:\n${page.slice(0, 2000)}`);
  return value;
};

async function token(params: Record<string, string>): Promise<Record<string, string>> {
  const response = await fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, string>;
}

describe('secrets at rest', () => {
  it('keeps no password, token, refresh token, code, PAT, client secret or session id in the data file or the database', async () => {
    const secrets: Record<string, string> = {
      'seeded password': seed.jsmith.password,
      'seeded PAT': seed.jsmith.pat,
      'seeded client secret': seed.client.secret,
    };
    const agent = new Agent(baseUrl);
    const signInPage = await (await agent.get('/users/sign_in')).text();
    expect((await agent.post('/users/sign_in', { _csrf: csrfOf(signInPage), login: 'jsmith', password: seed.jsmith.password })).status).toBe(302);
    // The signed session id is the cookie's "s:<id>.<signature>".
    secrets['session id'] = decodeURIComponent(agent.sid!).replace(/^s:/, '').split('.')[0]!;

    const redirectUri = 'https://app.example.com/oauth/callback';
    const apps = await (await agent.get('/profile/applications')).text();
    const created = await agent.post('/profile/applications', { _csrf: csrfOf(apps), name: 'At rest', redirect_uri: redirectUri, scopes: 'api' });
    expect(created.status).toBe(201);
    const createdPage = await created.text();
    const client = { client_id: inputValue(createdPage, 'app-id'), client_secret: inputValue(createdPage, 'app-secret') };
    secrets['client secret'] = client.client_secret;

    const authorize = `/oauth/authorize?client_id=${client.client_id}&redirect_uri=${encodeURIComponent(redirectUri)}&response_type=code&state=z`;
    const consent = await (await agent.get(authorize)).text();
    const approved = await agent.post('/oauth/authorize', {
      _csrf: csrfOf(consent),
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      state: 'z',
      decision: 'approve',
    });
    const code = new URL(approved.headers.get('location')!).searchParams.get('code')!;
    secrets['authorization code'] = code;

    const exchanged = await token({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, ...client });
    secrets['access token (code)'] = exchanged.access_token!;
    secrets['refresh token (code)'] = exchanged.refresh_token!;
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: exchanged.refresh_token!, ...client });
    secrets['access token (refresh)'] = refreshed.access_token!;
    secrets['refresh token (refresh)'] = refreshed.refresh_token!;

    const tokensPage = await (await agent.get('/profile/personal_access_tokens')).text();
    const pat = await agent.post('/profile/personal_access_tokens', { _csrf: csrfOf(tokensPage), name: 'at rest', scopes: 'api' });
    expect(pat.status).toBe(201);
    secrets['personal access token'] = inputValue(await pat.text(), 'token-value');
    secrets['access token (password)'] = (await token({ grant_type: 'password', username: 'jsmith', password: seed.jsmith.password })).access_token!;

    // Every secret works, so the check below is about live credentials, not stale strings.
    for (const t of [refreshed.access_token!, secrets['personal access token']!, secrets['access token (password)']!]) {
      const me = await fetch(`${baseUrl}/api/v3/user`, { headers: t.startsWith('tbpat') ? { 'private-token': t } : { authorization: `Bearer ${t}` } });
      expect(me.status).toBe(200);
    }

    let stored: string;
    if (server.kind === 'file') {
      const { store } = server;
      await store.flush();
      // The data file and its journal, which holds every change since the data file was last rewritten.
      stored = (await readFile(store.file!, 'utf8')) + (await readFile(journalFileOf(store.file!), 'utf8'));
      // The file is readable by its owner only.
      expect((await stat(store.file!)).mode & 0o077).toBe(0);
      expect((await stat(journalFileOf(store.file!))).mode & 0o077).toBe(0);
    } else {
      // Every row of every table, as JSON.
      stored = await server.dump();
    }
    expect(stored.length).toBeGreaterThan(1000);
    const found = Object.entries(secrets)
      .filter(([, value]) => value.length >= 8 && (stored.includes(value) || stored.includes(JSON.stringify(value).slice(1, -1))))
      .map(([name]) => name);
    expect(found).toEqual([]);
    // Digests stand in for them.
    const digestField = server.kind === 'file' ? 'token_digest' : 'token_digest';
    expect(stored).toMatch(new RegExp(`"${digestField}":"([0-9a-f]{64}|[A-Za-z0-9_-]{43})"`));
  });
});
