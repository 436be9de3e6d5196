// The secrets a command is given: a user's password (`users create`, `users reset-password`, `hash-password`) and the
// test-helper area's token (`test-helpers`, `events`). Never wanted on the command line, which every user of the
// machine can read (ps, /proc) and the shell keeps in its history: from a file, an environment variable or standard
// input instead. A flag that took one on the command line before stays for the usage written with it, with a warning.
import { readFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { ReadStream } from 'node:tty';
import { ConfigError } from '../explained-error.js';
import { warn } from './output.js';

/** Everything on `input`, less one final line ending (what `echo` or an editor adds is not part of the secret). */
export async function readAll(input: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(Buffer.from(chunk as Buffer));
  return lessFinalNewline(Buffer.concat(chunks).toString('utf8'));
}

const lessFinalNewline = (text: string) => text.replace(/\r?\n$/, '');

/** One line typed at the terminal, not echoed: Enter ends it, Backspace takes back a character, Ctrl-C or Ctrl-D gives up. */
function promptHidden(terminal: ReadStream, label: string, refusal: string): Promise<string> {
  process.stderr.write(`${label} (not shown): `);
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
        if (char === '\u0003' || char === '\u0004') return done(() => reject(new ConfigError(refusal)));
        if (char === '\u007f' || char === '\b') typed = [...typed].slice(0, -1).join('');
        else typed += char;
      }
    };
    terminal.on('data', onData);
    terminal.resume();
  });
}

/** Standard input's secret: typed without echo at a terminal, otherwise all of it (a pipe, a redirected file). */
export function secretFromInput(input: Readable, label: string, refusal: string): Promise<string> {
  const terminal = (input as Partial<ReadStream>).isTTY ? (input as ReadStream) : undefined;
  return terminal ? promptHidden(terminal, label, refusal) : readAll(input);
}

export interface SecretSources {
  /** What it is, for messages and the prompt: `password`, `token`. */
  label: string;
  /** The command, for messages: `users create`. */
  command: string;
  /** The old flag that takes it on the command line, and its value when given (`--password`). */
  commandLine: { flag: string; value: string | undefined };
  /** The flag naming a file that holds it, `-` for standard input (`--password-file`), and its value when given. */
  file: { flag: string; value: string | undefined };
  /** The environment variable that holds it, and the environment. */
  variable: string;
  env: NodeJS.ProcessEnv;
  /** Standard input. */
  input: Readable;
  /** Whether standard input is read when nothing else gives it (not where a command run from a loop must not wait). */
  inputByDefault: boolean;
}

/**
 * The secret from the first of: the command line (warned against), the file flag (`-` reads standard input), the
 * environment variable, standard input; undefined when none gives it and standard input is not to be read.
 */
export async function readSecret({ label, command, commandLine, file, variable, env, input, inputByDefault }: SecretSources): Promise<string | undefined> {
  if (commandLine.value !== undefined && file.value !== undefined) {
    throw new ConfigError(`${commandLine.flag} and ${file.flag} contradict each other: give the ${label} once, in the file (or on standard input with ${file.flag} -)`);
  }
  if (commandLine.value !== undefined) {
    warn(`${commandLine.flag} puts the ${label} where other users of this machine can read it (ps) and in your shell's history; give it on standard input, in ${variable} or with ${file.flag} FILE instead`);
    return commandLine.value;
  }
  const fromInput = () => secretFromInput(input, label, `${command}: no ${label} given`);
  if (file.value === '-') return fromInput();
  if (file.value !== undefined) {
    try {
      return lessFinalNewline(await readFile(file.value, 'utf8'));
    } catch (error) {
      throw new ConfigError(`${file.flag} ${file.value}: cannot read the ${label} from it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
  }
  if (env[variable] !== undefined) return env[variable];
  return inputByDefault ? fromInput() : undefined;
}
