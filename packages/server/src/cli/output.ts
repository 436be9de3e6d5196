// What the commands write: answers on stdout, warnings and errors on stderr, each prefixed `tokenbell: ` so that in a
// service's log they are told apart from the request log. An operator's mistake (an ExplainedError, or a system error
// with a known cause) is one line naming the flag or file and the fix; anything else is a bug and keeps its stack.
// Nothing of the server is imported here: a command run from a shell loop (tokenbell test-helpers) loads only what
// it uses, and the server's --help text is loaded only to explain a misspelt flag.
import { ExplainedError } from '../explained-error.js';

/**
 * Prints a command's answer (one or more lines); answers whether it reached standard output. A secret printed once (a
 * new token, a TOTP secret) is printed in one write and its command undoes what it made when the write fails, so the
 * secret is not lost: the reader gone (`| head -c1` finished, EPIPE) is not worth a crash mid-command either.
 */
export type Print = (line: string) => void | Promise<boolean>;

// Without a listener an EPIPE on standard output is thrown from nowhere and ends the process mid-command, before the
// store is closed: the write that failed learns of it instead, and the command carries on.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

/** One line (or lines) of a command's answer, on standard output; false once it is closed. */
export const print = (line: string): Promise<boolean> => new Promise((resolve) => process.stdout.write(`${line}\n`, (error) => resolve(!error)));

export const warn = (line: string): void => console.warn(`tokenbell: ${line}`);

/** Prints why the command stopped and ends the process with 1. */
export async function fail(error: unknown): Promise<never> {
  const badFlag = (error as NodeJS.ErrnoException | undefined)?.code?.startsWith('ERR_PARSE_ARGS') === true;
  console.error(`tokenbell: ${explain(error, badFlag ? (await import('../config.js')).usage : '')}`);
  process.exit(1);
}

export function explain(error: unknown, usage = ''): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') return `${error.message.replace(/^listen /, '')}: another process is listening there; choose another --port`;
  if (code === 'EADDRNOTAVAIL') return `${error.message.replace(/^listen /, '')}: --host names no address of this machine; use one of its own (127.0.0.1, ::1, or 0.0.0.0 for all)`;
  if (code === 'ENOTFOUND') return `--host ${(error as NodeJS.ErrnoException & { hostname?: string }).hostname ?? ''}: no such host name; use an address or a name this machine resolves`;
  if (code?.startsWith('ERR_PARSE_ARGS')) return `${error.message}\n\n${usage}`.trimEnd();
  if (code === 'EACCES') return `${error.message}: not allowed to listen there`;
  return error instanceof ExplainedError ? error.message : (error.stack ?? error.message);
}
