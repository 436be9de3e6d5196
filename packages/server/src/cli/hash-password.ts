// `tokenbell hash-password`: the hash a seed's `password_hash` takes, of a password read from standard input. Never
// from an argument: the command line is seen by every user of the machine (ps) and kept in the shell's history.
import type { Readable } from 'node:stream';
import { ConfigError } from '../explained-error.js';
import { parseFlags } from '../flags.js';
import { hashPassword } from '../domain/passwords.js';
import { secretFromInput } from './secrets.js';

export const hashPasswordUsage = `Usage: tokenbell hash-password              (asks for the password, not echoed)
       printf '%s' "$PASSWORD" | tokenbell hash-password

  Reads one password from standard input (all of it, less one final newline; at a terminal, one line typed without
  echo) and prints its scrypt hash with the production parameters, scrypt$N$r$p$salt$hash, for a seed fixture's
  "password_hash" in place of "password": the fixture then holds no password, and loading it hashes nothing. The
  password must be 8 to 1024 characters. It is never taken from the command line.
`;

export async function runHashPasswordCommand(args: string[], _env: NodeJS.ProcessEnv, print: (line: string) => void, input: Readable = process.stdin): Promise<void> {
  let help: boolean | undefined;
  try {
    ({ help } = parseFlags(args, { help: 'boolean' }).values);
  } catch (error) {
    if (!(error as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS')) throw error;
    // Not Node's message, which repeats the argument: it may be the password.
    throw new ConfigError(`hash-password takes no arguments: it reads the password from standard input (tokenbell hash-password --help)`);
  }
  if (help) return print(hashPasswordUsage);
  print(await hashPassword(await secretFromInput(input, 'password', 'hash-password: no password given')));
}
