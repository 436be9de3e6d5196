// Helpers for the hardening tests: raw HTTP on loopback (bytes exactly as given, no client-side fixing) and the real
// CLI as a child process on a temporary data file.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { freePort, spawnProcess, stopProcess, type Exit } from '../../../../scripts/lib/processes.js';
import { freshMigratedDatabase } from '../../../../test/support/postgres.js';
import { testStoreKind } from '../support/server.js';

export { freePort };

export const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
/** The CLI as it ships: this run's bundle of the server (test/support/server-build-global-setup.ts). */
export const cliPath = inject('serverCli');
export const exampleSeed = fileURLToPath(new URL('../../fixtures/example-seed.json', import.meta.url));

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 64 });

/**
 * One request with the path, headers and body sent as they are: fetch would re-encode a malformed query or refuse a
 * header, and the point here is to send what a hostile client would.
 */
export function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string | Buffer,
  /** Another loopback source address (127.0.0.2 and up), to act as a different client. */
  localAddress?: string,
): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  // A length rather than chunks: Node's own HTTP parser refuses a chunked GET before the application sees it.
  const sized = body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
  return new Promise((resolve, reject) => {
    const request = http.request({ host: hostname, port, method, path, headers: sized, agent: keepAlive, ...(localAddress ? { localAddress } : {}) }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (c: Buffer) => chunks.push(c));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}

/**
 * A request with no body and neither Content-Length nor Transfer-Encoding, as curl sends `-X POST` without data: Node's
 * client would add a framing header, and with one the body parsers see an empty body instead of none.
 */
export function bodilessRequest(baseUrl: string, method: string, path: string, headers: Record<string, string>): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  const head = [`${method} ${path} HTTP/1.1`, `Host: ${hostname}:${port}`, 'Connection: close', ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(`${head.join('\r\n')}\r\n\r\n`));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const [statusAndHeaders = '', ...rest] = raw.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = statusAndHeaders.split('\r\n');
      const parsed: http.IncomingHttpHeaders = {};
      for (const line of headerLines) parsed[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
      resolve({ status: Number(statusLine.split(' ')[1]), headers: parsed, body: rest.join('\r\n\r\n') });
    });
  });
}

export async function tempDir(): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), 'tokenbell-hardening-'));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/**
 * Where the CLI keeps its data in this test project: `fileArgs` (a data file, or memory), or, in the `postgres`
 * project (TOKENBELL_TEST_STORE=postgres), `--database-url` on a fresh migrated database that `drop` removes.
 */
export async function cliStore(fileArgs: string[]): Promise<{ kind: 'file' | 'postgres'; args: string[]; drop(): Promise<void> }> {
  if (testStoreKind() === 'file') return { kind: 'file', args: fileArgs, drop: async () => {} };
  const database = await freshMigratedDatabase(inject('postgresUrl'));
  return { kind: 'postgres', args: ['--database-url', database.url], drop: () => database.drop() };
}

export interface CliProcess {
  child: ChildProcess;
  port: number;
  baseUrl: string;
  output: () => string;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (or signal) once the process has ended. */
  exited: Promise<Exit>;
}

/**
 * The real CLI, as `npm start` would run it but from source; loopback and a free port only. `wrapper` is a command
 * that runs it (`unshare ...`), given before Node's path.
 */
export function runCli(args: string[], port: number, wrapper: string[] = [], env: NodeJS.ProcessEnv = {}): CliProcess {
  const command = [...wrapper, process.execPath, cliPath, '--host', '127.0.0.1', '--port', String(port), ...args];
  const { child, output, stdout, stderr, exited } = spawnProcess(command[0]!, command.slice(1), {
    cwd: repoRoot,
    env: { NODE_ENV: 'production', ...env },
  });
  return { child, port, baseUrl: `http://127.0.0.1:${port}`, output, stdout, stderr, exited };
}

/** Starts the CLI on a free port and waits for "listening"; rejects with its output if it exits first. */
export async function startCli(args: string[], timeoutMs = 15_000, wrapper: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<CliProcess> {
  const port = await freePort();
  const cli = runCli(args, port, wrapper, env);
  const deadline = Date.now() + timeoutMs;
  while (!cli.output().includes('tokenbell listening on')) {
    const ended = await Promise.race([cli.exited, new Promise<null>((r) => setTimeout(() => r(null), 20))]);
    if (ended) throw new Error(`tokenbell exited (${ended.code ?? ended.signal}) before listening:\n${cli.output()}`);
    if (Date.now() > deadline) {
      cli.child.kill('SIGKILL');
      throw new Error(`tokenbell did not start within ${timeoutMs} ms:\n${cli.output()}`);
    }
  }
  return cli;
}

/** `tokenbell users ...` as an operator types it: its exit code and what it printed. */
export async function usersCommand(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; output: string }> {
  const cli = spawnProcess(process.execPath, [cliPath, 'users', ...args], { cwd: repoRoot, env: { NODE_ENV: 'production', ...env } });
  const { code } = await cli.exited;
  return { code, output: cli.output() };
}

export interface CommandRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `tokenbell <args>` as a process, from source: `stdin` on its standard input, `env` over this process's, and with
 * `closedOutput` its standard output closed at once, as by a reader that went away (`| head -c1` done).
 */
export function commandProcess(args: string[], { stdin = '', env = {}, closedOutput = false }: { stdin?: string; env?: NodeJS.ProcessEnv; closedOutput?: boolean } = {}): Promise<CommandRun> {
  const child = spawn(process.execPath, [cliPath, ...args], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: 'pipe' });
  const out = { stdout: '', stderr: '' };
  if (closedOutput) child.stdout.destroy();
  else child.stdout.on('data', (chunk: Buffer) => (out.stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (out.stderr += chunk.toString('utf8')));
  child.stdin.end(stdin);
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, ...out })));
}

/** Ends a child this test started (by its own handle), whatever state it is in. */
export async function stopCli(cli: CliProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  await stopProcess(cli.child, { signal });
}
