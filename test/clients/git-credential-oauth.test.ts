// git-credential-oauth (Debian's, 0.4.2), run as a process end to end against the reference server, configured for a
// self-managed GitLab as its README says: a client id, `/oauth/authorize` and `/oauth/token`, GitLab's scopes
// `read_repository write_repository`, a loopback redirect on a port it picks at run time (RFC 8252), and PKCE with
// its own verifier (32 random bytes in standard base64, padding kept, which RFC 7636's alphabet would refuse). The
// browser step is a program named `open` on its PATH that follows the authorization URL, answered by the server's
// automatic approval. .ci/run installs the package; a machine without it fails here rather than skipping.
import { execFile, spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../packages/server/test/support/server.js';

const run = promisify(execFile);
const helper = '/usr/bin/git-credential-oauth';
const clientId = 'git-credential-oauth-client-0000000';
const adminToken = 'tbpat-root-git-credential-token-000000000';
const appSeed = {
  users: [
    { username: 'jsmith', email: 'jsmith@example.com', name: 'Jane Smith', password: 'correct-horse-battery' },
    { username: 'root', email: 'root@example.com', name: 'Root', password: 'root-password-for-tests', is_admin: true, personal_access_tokens: [{ name: 'helpers', token: adminToken, scopes: ['api'] }] },
  ],
  applications: [
    // As its README asks GitLab users to register it: not confidential, redirect URI http://127.0.0.1/ (its redirect, which has no path, matches it: an empty path is /), the Git scopes.
    { name: 'Git Credential Manager', owner: 'root', client_id: clientId, redirect_uris: ['http://127.0.0.1/'], scopes: ['read_repository', 'write_repository'], confidential: false },
  ],
};

let server: TestServer;
let dir: string;
beforeAll(async () => {
  const installed = await run(helper, ['-h']).then(
    () => true,
    (error: { code?: string | number }) => error.code !== 'ENOENT',
  );
  if (!installed) throw new Error(`git-credential-oauth is required for this test but ${helper} is missing; install it (apt-get install git-credential-oauth), as .ci/run does.`);
  server = await startTestServer({ seed: appSeed, testHelpers: true });
  dir = await mkdtemp(join(tmpdir(), 'tokenbell-git-credential-'));
});
afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Runs `git credential-oauth get` for the server's URL with `stdin`, in a home of its own; answers its stdout. */
function credentialGet(env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const url = new URL(server.baseUrl);
  return new Promise((resolve, reject) => {
    const child = spawn(helper, ['get'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(`protocol=${url.protocol.slice(0, -1)}\nhost=${url.host}\n\n`);
  });
}

describe('git-credential-oauth 0.4.2', () => {
  it("gets a token with GitLab's Git scopes, its loopback redirect and its padded PKCE verifier, and the token is good", { timeout: 40_000 }, async () => {
    const base = server.baseUrl;
    // What a GitLab user puts in their git config for a self-managed instance, in a home of the test's own.
    const gitconfig = join(dir, 'gitconfig');
    await writeFile(
      gitconfig,
      [`[credential "${base}"]`, `\toauthClientId = ${clientId}`, '\toauthScopes = read_repository write_repository', '\toauthAuthURL = /oauth/authorize', '\toauthTokenURL = /oauth/token', ''].join('\n'),
    );
    // The "browser": follows the authorization URL and its redirects back to the helper's loopback listener. Like a
    // desktop's `open`, it returns at once and the page loads on its own: the helper reads the redirect only after
    // `open` has returned.
    const bin = join(dir, 'bin');
    await mkdir(bin, { recursive: true });
    const browserLog = join(dir, 'browser.log');
    const open = join(bin, 'open');
    const visit = `fetch(process.argv[1]).then((r) => console.log(r.status, r.url), (e) => console.log(String(e)))`;
    await writeFile(open, `#!/bin/sh\n${process.execPath} -e '${visit}' "$1" >> ${browserLog} 2>&1 &\n`);
    await chmod(open, 0o755);

    const approval = await fetch(`${base}/api/v3/test_helpers/auto_approval`, {
      method: 'PUT',
      headers: { 'PRIVATE-TOKEN': adminToken, 'Content-Type': 'application/json' },
      body: JSON.stringify({ username: 'jsmith' }),
    });
    expect(approval.status).toBe(200);

    const result = await credentialGet({ PATH: `${bin}:/usr/bin:/bin`, HOME: dir, GIT_CONFIG_GLOBAL: gitconfig, GIT_CONFIG_NOSYSTEM: '1' });
    expect(result.code, `${result.stderr}\nbrowser: ${await readFile(browserLog, 'utf8').catch(() => '')}`).toBe(0);
    const printed = Object.fromEntries(result.stdout.trim().split('\n').map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string]));
    expect(printed.username).toBe('oauth2');
    expect(printed.password).toMatch(/^tba_/);

    // The token is what git would use: its owner and GitLab's Git scopes, and nothing of the API beyond them.
    const info = await (await fetch(`${base}/oauth/token/info`, { headers: { Authorization: `Bearer ${printed.password}` } })).json();
    expect(info).toMatchObject({ scope: ['read_repository', 'write_repository'], application: { uid: clientId } });
    const user = await fetch(`${base}/api/v4/user`, { headers: { Authorization: `Bearer ${printed.password}` } });
    expect(user.status).toBe(403);
    // It asked with an S256 challenge, so the exchange above checked its padded verifier (refused before issue 40 as
    // invalid_grant, "the PKCE code_verifier does not match").
    expect(result.stderr).toMatch(/code_challenge_method=S256/);
  });
});
