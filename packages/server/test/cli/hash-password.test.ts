// `tokenbell hash-password`: the password from standard input, its production hash on standard output, which a seed's
// password_hash takes and which verifies; a password given as an argument is refused without being repeated.
import { execFile } from 'node:child_process';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runHashPasswordCommand } from '../../src/cli/hash-password.js';
import { checkPasswordHash, needsRehash, verifyPassword } from '../../src/domain/passwords.js';
import { ConfigError } from '../../src/explained-error.js';
import { cliPath, repoRoot } from '../hardening/support.js';

const hashOf = async (input: string, args: string[] = []) => {
  const lines: string[] = [];
  await runHashPasswordCommand(args, {}, (line) => lines.push(line), Readable.from([Buffer.from(input)]));
  return lines;
};

describe('tokenbell hash-password', () => {
  it('prints the production hash of the password on standard input, less one final newline', async () => {
    const [hash, ...more] = await hashOf('correct horse battery\n');
    expect(more).toEqual([]);
    expect(hash).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(() => checkPasswordHash(hash)).not.toThrow();
    expect(needsRehash(hash!)).toBe(false);
    expect(await verifyPassword('correct horse battery', hash!)).toBe(true);
    expect(await verifyPassword('correct horse battery\n', hash!)).toBe(false);
    // Only the last line ending goes: a password may end in spaces, or have a newline of its own.
    expect(await verifyPassword('two\nlines here ', (await hashOf('two\nlines here \r\n'))[0]!)).toBe(true);
  });

  it('refuses a password the policy refuses', async () => {
    await expect(hashOf('short\n')).rejects.toMatchObject({ name: 'InputError', field: 'password', message: 'the password must be at least 8 characters long' });
    await expect(hashOf('')).rejects.toMatchObject({ name: 'InputError', field: 'password' });
  });

  it('refuses an argument, without repeating it: a password is never taken from the command line', async () => {
    const refusal = (await hashOf('correct horse battery', ['my-secret-password']).catch((error: unknown) => error)) as Error;
    expect(refusal).toBeInstanceOf(ConfigError);
    expect(refusal.message).toBe('hash-password takes no arguments: it reads the password from standard input (tokenbell hash-password --help)');
    await expect(hashOf('correct horse battery', ['--password', 'my-secret-password'])).rejects.toThrow(/^hash-password takes no arguments/);
  });

  it('is a command of the tokenbell binary', { timeout: 60_000 }, async () => {
    const output = await new Promise<string>((resolve, reject) => {
      const child = execFile(process.execPath, [cliPath, 'hash-password'], { cwd: repoRoot }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
      child.stdin!.end('correct horse battery\n');
    });
    const [hash, rest] = output.split('\n');
    expect(rest).toBe('');
    expect(await verifyPassword('correct horse battery', hash!)).toBe(true);
  });
});
