// Child processes for the test suites and the benchmark: free ports on loopback, spawning with the output kept for
// failure messages, waiting until an HTTP URL answers, and stopping, with nothing left running when the parent ends.
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';

/** A port nobody listens on right now: bind port 0 on 127.0.0.1, read the number, let it go. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  probe.unref();
  await new Promise<void>((resolve, reject) => probe.once('error', reject).listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port from the probe');
  return address.port;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface SpawnedProcess {
  child: ChildProcess;
  /** What the process printed on stdout and stderr, interleaved (only the tail when `outputLimit` is set). */
  output(): string;
  /** Each stream alone, for a test of what goes where (the log, or the operator's terminal). */
  stdout(): string;
  stderr(): string;
  /** Resolves once the process has ended. */
  exited: Promise<Exit>;
}

const running = new Set<ChildProcess>();
// A crashed or interrupted run never reaches its own clean-up; whatever is still running dies with this process.
// 'exit' handlers must be synchronous, hence SIGKILL: there is no waiting for a clean stop here.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

const hasEnded = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

/** Spawns with piped output and registers the child with the exit guard; `env` adds to this process's own. */
export function spawnProcess(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; outputLimit?: number } = {},
): SpawnedProcess {
  const child = spawn(command, args, { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.env } });
  running.add(child);
  const exited = new Promise<Exit>((resolve) =>
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    }),
  );
  const limit = options.outputLimit ?? Infinity;
  const kept = { output: '', stdout: '', stderr: '' };
  const keep = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
    for (const name of ['output', stream] as const) {
      kept[name] += chunk.toString('utf8');
      if (kept[name].length > limit) kept[name] = kept[name].slice(-limit);
    }
  };
  child.stdout!.on('data', keep('stdout'));
  child.stderr!.on('data', keep('stderr'));
  return { child, output: () => kept.output, stdout: () => kept.stdout, stderr: () => kept.stderr, exited };
}

/** Sends `signal` (SIGTERM by default), then SIGKILL if the process is still there after `graceMs`. */
export async function stopProcess(child: ChildProcess, { signal = 'SIGTERM', graceMs = 5_000 }: { signal?: NodeJS.Signals; graceMs?: number } = {}): Promise<void> {
  if (hasEnded(child)) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Stops every process `spawnProcess` started that is still running. */
export async function stopAllProcesses(): Promise<void> {
  await Promise.all([...running].map((child) => stopProcess(child)));
}

export interface WaitForHttpOptions {
  headers?: Record<string, string>;
  /** Decides on each answer: true when ready, false to ask again; it may throw to give up at once. */
  ready?: (response: Response) => boolean;
  timeoutMs?: number;
  intervalMs?: number;
  /** A limit per attempt, for a process that accepts connections but does not answer yet. */
  attemptTimeoutMs?: number;
}

/**
 * Asks `url` until `ready` accepts the answer (200 by default). Refused connections mean "not yet"; the process
 * ending first, or the time running out, rejects with its output.
 */
export async function waitForHttp(
  name: string,
  target: Pick<SpawnedProcess, 'child' | 'output'>,
  url: string,
  { headers = {}, ready = (r) => r.status === 200, timeoutMs = 60_000, intervalMs = 100, attemptTimeoutMs }: WaitForHttpOptions = {},
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const { exitCode, signalCode } = target.child;
    if (hasEnded(target.child)) throw new Error(`${name} exited (${exitCode ?? signalCode}) before answering:\n${target.output()}`);
    let response: Response | undefined;
    try {
      response = await fetch(url, { headers, ...(attemptTimeoutMs ? { signal: AbortSignal.timeout(attemptTimeoutMs) } : {}) });
      await response.arrayBuffer();
    } catch {
      response = undefined;
    }
    if (response && ready(response)) return;
    if (performance.now() > deadline) throw new Error(`${name} did not answer ${url} within ${timeoutMs} ms:\n${target.output()}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
