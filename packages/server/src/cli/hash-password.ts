// `tokenbell hash-password`: the hash a seed's `password_hash` takes, of a password read from standard input. Never
// from an argument: the command line is seen by every user of the machine (ps) and kept in the shell's history.
import type { Readable } from 'node:stream';
import type { ReadStream } from 'node:tty';
import { ConfigError } from '../explained-error.js';
import { parseFlags } from '../flags.js';
import { hashPassword } from '../domain/passwords.js';

export const hashPasswordUsage = `Usage: tokenbell hash-password              (asks for the password, not echoed)
       printf '%s' "$PASSWORD" | tokenbell hash-password

  Reads one password from standard input (all of it, less one final newline; at a terminal, one line typed without
  echo) and prints its scrypt hash with the production parameters, scrypt$N$r$p$salt$hash, for a seed fixture's
  "password_hash" in place of "password": the fixture then holds no password, and loading it hashes nothing. The
  password must be 8 to 1024 characters. It is never taken from the command line.
`;

/** Everything on `input`, less one final line ending (what `echo` or an editor adds is not part of the password). */
async function readPassword(input: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/** One line typed at the terminal, not echoed: Enter ends it, Backspace takes back a character, Ctrl-C or Ctrl-D gives up. */
function promptPassword(terminal: ReadStream): Promise<string> {
  process.stderr.write('password (not shown): ');
  terminal.setRawMode(true);
  terminal.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    let typed = '';
    const done = (settle: () => void) => {
      terminal.off('data', onData);
      terminal.setRawMode(false);
      terminal.pause();
      process.stderr.write('\n');
      settle();
    };
    const onData = (text: string) => {
      for (const char of text) {
        if (char === '\r' || char === '\n') return done(() => resolve(typed));
        if (char === '\u0003' || char === '\u0004') return done(() => reject(new ConfigError('hash-password: no password given')));
        if (char === '\u007f' || char === '\b') typed = [...typed].slice(0, -1).join('');
        else typed += char;
      }
    };
    terminal.on('data', onData);
    terminal.resume();
  });
}

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
  const terminal = (input as Partial<ReadStream>).isTTY ? (input as ReadStream) : undefined;
  print(await hashPassword(terminal ? await promptPassword(terminal) : await readPassword(input)));
}
