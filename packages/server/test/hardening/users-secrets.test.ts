// `tokenbell users` run as a process, with no secret on its command line: the password of `create` and
// `reset-password` from standard input, TOKENBELL_PASSWORD or --password-file, never echoed; --password still taken,
// with a warning on standard error; and a secret printed once (`token`, `two-factor --on`) that cannot reach standard
// output (closed: EPIPE) taken back rather than lost, with no crash, no stack and nothing left beside the data file.
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDurableData } from '../../src/store/file/store.js';
import { commandProcess, startCli, stopCli, tempDir } from './support.js';

let dir: Awaited<ReturnType<typeof tempDir>>;
let file: string;
beforeAll(async () => {
  dir = await tempDir();
  file = join(dir.path, 'users.json');
});
afterAll(() => dir?.remove());

/** `tokenbell users ...` on the test's data file (commandProcess: standard input, environment, a closed output). */
const users = (args: string[], options: Parameters<typeof commandProcess>[1] = {}) =>
  commandProcess(['users', ...args, '--data', file], { ...options, env: { NODE_ENV: 'production', ...options.env } });

const create = (username: string, options: Parameters<typeof users>[1] = {}, extra: string[] = []) =>
  users(['create', '--username', username, '--email', `${username}@example.com`, '--name', username, ...extra], options);

const grant = (baseUrl: string, username: string, password: string) =>
  fetch(`${baseUrl}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'password', username, password }) });

describe('tokenbell users with no secret on the command line', () => {
  // Nine processes through tsx and a server: 25-40 s on a busy two-core machine.
  it('takes the password from standard input, TOKENBELL_PASSWORD or --password-file, and --password with a warning', { timeout: 120_000 }, async () => {
    const piped = await create('piped', { stdin: 'piped password one\n' });
    expect(piped).toEqual({ code: 0, stdout: 'created user piped (id 1)\n', stderr: '' });
    expect(await create('fromenv', { env: { TOKENBELL_PASSWORD: 'environment password' } })).toMatchObject({ code: 0, stderr: '' });
    const secretFile = join(dir.path, 'password.txt');
    await writeFile(secretFile, 'password from a file\n', { mode: 0o600 });
    expect(await create('fromfile', {}, ['--password-file', secretFile])).toMatchObject({ code: 0, stderr: '' });
    expect(await create('dashed', { stdin: 'password on stdin by dash' }, ['--password-file', '-'])).toMatchObject({ code: 0, stderr: '' });
    const flagged = await create('flagged', {}, ['--password', 'on the command line']);
    expect(flagged.code).toBe(0);
    expect(flagged.stderr).toBe("tokenbell: --password puts the password where other users of this machine can read it (ps) and in your shell's history; give it on standard input, in TOKENBELL_PASSWORD or with --password-file FILE instead\n");
    expect(await users(['reset-password', '--username', 'piped'], { stdin: 'piped password two' })).toEqual({ code: 0, stdout: 'set a new password for piped; ended 0 browser sessions\n', stderr: '' });

    // Nothing given (standard input empty): refused, and no user made.
    const none = await create('nobody');
    expect(none).toMatchObject({ code: 1, stdout: '' });
    expect(none.stderr).toBe('tokenbell: users create needs a password: on standard input, in TOKENBELL_PASSWORD, or with --password-file FILE\n');
    const missing = await create('nofile', {}, ['--password-file', join(dir.path, 'absent.txt')]);
    expect(missing).toMatchObject({ code: 1, stderr: expect.stringMatching(/^tokenbell: --password-file .*absent\.txt: cannot read the password from it \(ENOENT\)\n$/) });

    const server = await startCli(['--data', file]);
    try {
      for (const [username, password] of [['piped', 'piped password two'], ['fromenv', 'environment password'], ['fromfile', 'password from a file'], ['dashed', 'password on stdin by dash'], ['flagged', 'on the command line']]) {
        expect((await grant(server.baseUrl, username!, password!)).status, username).toBe(200);
      }
      expect((await grant(server.baseUrl, 'piped', 'piped password one')).status).toBe(400);
      expect((await grant(server.baseUrl, 'nobody', 'x')).status).toBe(400);
    } finally {
      await stopCli(server);
    }
  });

  it('takes back a token or a TOTP secret it cannot print, and finishes a command whose answer is no secret, leaving no file behind', { timeout: 90_000 }, async () => {
    const before = (await readdir(dir.path)).sort();
    const token = await users(['token', '--username', 'fromenv', '--name', 'lost'], { closedOutput: true });
    expect(token.code).toBe(1);
    expect(token.stderr).toBe('tokenbell: the personal access token "lost" for fromenv could not be printed (standard output is closed), so it was revoked; run the command again with its output read to the end\n');
    const pats = (await readDurableData(file)).personal_access_tokens.filter((t) => t.name === 'lost');
    expect(pats.map((t) => t.revoked)).toEqual([true]);

    const twoFactor = await users(['two-factor', '--username', 'fromenv', '--on'], { closedOutput: true });
    expect(twoFactor.code).toBe(1);
    expect(twoFactor.stderr).toMatch(/^tokenbell: the new TOTP secret for fromenv could not be printed \(standard output is closed\), so it was taken back: two-factor authentication is as it was;/);
    expect((await readDurableData(file)).users.find((u) => u.username === 'fromenv')!.otp_secret ?? null).toBeNull();

    // No secret in the answer: the user is made, and the command ends as it would have.
    const created = await create('unread', { stdin: 'a password nobody read back', closedOutput: true });
    expect(created).toEqual({ code: 0, stdout: '', stderr: '' });
    expect((await readDurableData(file)).users.map((u) => u.username)).toContain('unread');
    expect((await readdir(dir.path)).sort()).toEqual(before);
  });
});
