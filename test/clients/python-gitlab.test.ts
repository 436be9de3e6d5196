// Debian's python-gitlab (package python3-gitlab, run with /usr/bin/python3) against the reference server: the
// idioms its users write (auth(), version(), paged lists, settings), with a personal access token and with an OAuth token. .ci/run installs the package; a
// machine without it fails here, naming the package, rather than skipping.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seed, startTestServer, type TestServer } from '../../packages/server/test/support/server.js';

const run = promisify(execFile);
const python = '/usr/bin/python3';
const session = fileURLToPath(new URL('./python_gitlab_session.py', import.meta.url));

let server: TestServer;
let version = 'not installed';
beforeAll(async () => {
  const probe = await run(python, ['-c', 'import gitlab; print(gitlab.__version__)']).catch(() => undefined);
  if (!probe) throw new Error(`python-gitlab is required for this test but ${python} cannot import gitlab; install it (apt-get install python3-gitlab), as .ci/run does.`);
  version = probe.stdout.trim();
  server = await startTestServer();
});
afterAll(() => server?.close());

describe('python-gitlab (Debian python3-gitlab)', () => {
  it('authenticates, reads and saves settings globally, per group and per project, lazily too', async () => {
    const token = await fetch(`${server.baseUrl}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'password', username: 'jsmith', password: seed.jsmith.password, scope: 'api' }),
    });
    const { access_token } = (await token.json()) as { access_token: string };
    const { stdout } = await run(python, [session, server.baseUrl, seed.jsmith.pat, access_token], { timeout: 60_000 });
    const seen = JSON.parse(stdout) as Record<string, unknown>;
    console.log(`python-gitlab ${version}`);
    expect(seen.version).toBe(version);
    for (const kind of ['private_token', 'oauth_token']) {
      expect(seen[kind], kind).toEqual({
        user: 'jsmith',
        // gl.version() answers ['unknown', 'unknown'] when /api/v4/version is missing or refused.
        server_version: ['17.11.0', expect.stringMatching(/^tokenbell-/)],
        owned_groups: ['acme', 'opensource'],
        member_projects: ['acme/website', 'acme/widgets', 'jsmith/dotfiles', 'opensource/bell'],
        global: 'watch',
        group: { full_path: 'acme', level: 'custom', new_issue: true },
        project: { id: expect.any(Number), path_with_namespace: 'acme/widgets', level: 'mention' },
        lazy_project: 'mention',
        lazy_group: 'custom',
        missing_project: ['GitlabGetError', 404, '404 Project Not Found'],
      });
    }
    expect(seen.bad_token).toEqual(['GitlabAuthenticationError', 401, '401 Unauthorized']);
  });
});
