// `tokenbell test-helpers`: the command function against real instances (startTokenbell, and a server with the area
// off), its operations and help read from the document.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { document } from '../../src/openapi/document.js';
import { runTestHelpersCommand, testHelperOperations } from '../../src/cli/test-helpers.js';
import { type RunningTokenbell, startTokenbell } from '../../src/testing.js';
import { commandProcess, freePort, tempDir } from '../hardening/support.js';
import { startTestServer, type TestServer } from '../support/server.js';

let tb: RunningTokenbell;
let off: TestServer;
beforeAll(async () => {
  tb = await startTokenbell({ seed: { users: [{ username: 'alice', email: 'alice@example.com', name: 'Alice', password: 'correct horse battery' }] } });
  off = await startTestServer();
});
afterAll(async () => {
  await tb?.close();
  await off?.close();
});

/** Runs the command; what it printed, or the error it threw. */
async function run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const lines: string[] = [];
  await runTestHelpersCommand(args, env, (line) => void lines.push(line));
  return lines.join('\n');
}
const against = () => ['--url', tb.url, '--token', tb.adminToken];

describe('tokenbell test-helpers', () => {
  it('lists every operation of the test_helpers tag, with its summary, in --help', async () => {
    const tagged = Object.values(document.paths as Record<string, Record<string, { tags?: string[]; operationId: string; summary: string }>>).flatMap((item) =>
      Object.values(item).filter((op) => op?.tags?.includes('test_helpers')),
    );
    expect(tagged.length).toBeGreaterThan(10);
    expect(testHelperOperations.map((op) => op.operationId).sort()).toEqual(tagged.map((op) => op.operationId).sort());
    const help = await run(['--help']);
    for (const op of tagged) expect(help).toContain(op.summary);
    expect(help).toMatch(/^ {2}advance-clock +Move the instance's time forward/m);
    expect(await run(['advanceTestClock', '--help'])).toContain('POST /api/v3/test_helpers/clock');
  });

  it("takes an operation by the document's name for it (x-helper) or its operationId, each in either case style", async () => {
    for (const spelling of ['advance-clock', 'advanceClock', 'advance-test-clock', 'advanceTestClock', 'ADVANCE-CLOCK']) {
      expect(await run([spelling, '--help'])).toContain('POST /api/v3/test_helpers/clock');
    }
    // Every operation's name is the SDK's method, so a shell line and a test's call read the same.
    for (const op of testHelperOperations) expect(Object.keys(tb.helpers)).toContain(op.helper);
  });

  it('advances the clock with a JSON body, and prints the answer as JSON', async () => {
    const out = await run(['advance-clock', '{"seconds": 3600}', ...against()]);
    expect(JSON.parse(out)).toMatchObject({ offset_seconds: 3600 });
    expect(out).toContain('\n  "offset_seconds": 3600');
    expect((await tb.helpers.clock()).offset_seconds).toBe(3600);
  });

  it('resets the instance and prints nothing for the 204', async () => {
    await tb.helpers.createUser({ username: 'bob', email: 'bob@example.com', name: 'Bob', password: 'correct horse battery' });
    // The token and URL from the environment, as a shell session would set them once.
    expect(await run(['resetTestState'], { TOKENBELL_URL: tb.url, TOKENBELL_TEST_HELPERS_TOKEN: tb.adminToken })).toBe('');
    // bob is gone: the same user can be added again.
    await expect(tb.helpers.createUser({ username: 'bob', email: 'bob@example.com', name: 'Bob', password: 'correct horse battery' })).resolves.toMatchObject({ username: 'bob' });
    expect((await tb.helpers.clock()).offset_seconds).toBe(0);
  });

  it('passes --query to a listing, and --path-param into the path', async () => {
    await fetch(`${tb.url}/api/v4/user`, { headers: { 'private-token': tb.adminToken } });
    await fetch(`${tb.url}/api/v3/notification_settings`, { headers: { 'private-token': tb.adminToken } });
    const listed = JSON.parse(await run(['requests', '--query', 'path=/api/v4/user', '--query', 'per_page=5', ...against()])) as Array<{ method: string; path: string }>;
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.every((r) => r.path === '/api/v4/user')).toBe(true);
    await expect(run(['emit-notification-event', '{"kind":"new_note","title":"t","author":"alice"}', '--path-param', 'id=nobody/nothing', ...against()])).rejects.toThrow(
      /POST \/api\/v3\/test_helpers\/projects\/nobody%2Fnothing\/notification_events: 404 Project Not Found$/,
    );
  });

  it("says the server's message on a 400, in one line", async () => {
    const error = await run(['advance-test-clock', '{"seconds": -5}', ...against()]).catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(new RegExp(`^${tb.url}: POST /api/v3/test_helpers/clock: .*seconds`));
    expect((error as Error).message).not.toContain('\n');
  });

  it('names the flag to fix: an unreachable --url, an area that is off, a missing --token, a body or parameter that does not fit', async () => {
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    await expect(run(['get-test-clock', '--url', nowhere, '--token', 'x'])).rejects.toThrow(new RegExp(`^cannot reach ${nowhere} \\(--url\\): .*ECONNREFUSED`));
    await expect(run(['get-test-clock', '--url', off.baseUrl, '--token', 'tbpat-jsmith-example-token-000000000000000000'])).rejects.toThrow(/404 Not Found \(is the server running with --test-helpers\?\)$/);
    await expect(run(['get-test-clock', '--url', tb.url])).rejects.toThrow(/needs --token-file FILE \(or TOKENBELL_TEST_HELPERS_TOKEN\)/);
    await expect(run(['advance-test-clock', ...against()])).rejects.toThrow(/needs a JSON body, e\.g\. '\{"seconds":7200\}'/);
    await expect(run(['advance-test-clock', '{seconds: 1}', ...against()])).rejects.toThrow(/the JSON argument is not JSON/);
    await expect(run(['reset', '{}', ...against()])).rejects.toThrow(/takes no JSON body/);
    await expect(run(['list-faults', '--query', 'nope=1', ...against()])).rejects.toThrow(/--query nope: faults has no query parameters/);
    await expect(run(['emit-notification-event', '{}', ...against()])).rejects.toThrow(/needs --path-param id=VALUE/);
    await expect(run(['no-such-operation'])).rejects.toThrow(/unknown operation "no-such-operation"; one of .*advance-clock/);
  });
});

/** `tokenbell test-helpers ...` as a process (commandProcess), with no token in its environment but what a case gives. */
const asProcess = (args: string[], options: { stdin?: string; closedOutput?: boolean } = {}) =>
  commandProcess(['test-helpers', ...args], { ...options, env: { TOKENBELL_TEST_HELPERS_TOKEN: undefined } });

describe('tokenbell test-helpers with no secret on the command line', () => {
  it('reads the token from --token-file (- for standard input) and a body holding a password from standard input (-); --token warns', { timeout: 60_000 }, async () => {
    const dir = await tempDir();
    try {
      const tokenFile = join(dir.path, 'token');
      await writeFile(tokenFile, `${tb.adminToken}\n`, { mode: 0o600 });
      const body = JSON.stringify({ username: 'stdinuser', email: 'stdinuser@example.com', name: 'Stdin', password: 'a password from stdin' });
      const created = await asProcess(['create-user', '-', '--url', tb.url, '--token-file', tokenFile], { stdin: body });
      expect(created).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(created.stdout)).toMatchObject({ username: 'stdinuser' });
      const grant = await fetch(`${tb.url}/oauth/token`, { method: 'POST', body: new URLSearchParams({ grant_type: 'password', username: 'stdinuser', password: 'a password from stdin' }) });
      expect(grant.status).toBe(200);

      const clock = await asProcess(['clock', '--url', tb.url, '--token-file', '-'], { stdin: tb.adminToken });
      expect(clock).toMatchObject({ code: 0, stderr: '' });
      const both = await asProcess(['create-user', '-', '--url', tb.url, '--token-file', '-'], { stdin: body });
      expect(both).toMatchObject({ code: 1, stderr: 'tokenbell: test-helpers create-user: standard input holds the JSON body or the token, not both\n' });
      const flagged = await asProcess(['clock', '--url', tb.url, '--token', tb.adminToken]);
      expect(flagged.code).toBe(0);
      expect(flagged.stderr).toBe("tokenbell: --token puts the token where other users of this machine can read it (ps) and in your shell's history; give it on standard input, in TOKENBELL_TEST_HELPERS_TOKEN or with --token-file FILE instead\n");
    } finally {
      await dir.remove();
    }
  });

  it('fails, naming why, when the answer cannot be printed (standard output closed), instead of ending as if it had been shown', { timeout: 30_000 }, async () => {
    const minted = await asProcess(['mint-personal-access-token', '{"username": "alice", "name": "unread", "scopes": ["read_api"]}', '--url', tb.url, '--token-file', '-'], { stdin: tb.adminToken, closedOutput: true });
    expect(minted).toMatchObject({ code: 1, stderr: 'tokenbell: test-helpers mint-personal-access-token: the answer could not be printed (standard output is closed)\n' });
  });
});
