// Child processes for the benchmark targets: each target gets its own process (so it never shares the event loop
// with autocannon), listens on 127.0.0.1 on a port we found free, and is killed at the end whatever happens.
import { type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { spawnProcess, stopProcess, waitForHttp } from '../../scripts/lib/processes.js';

export { freePort, stopAllProcesses as stopAll } from '../../scripts/lib/processes.js';

// Ctrl-C or a kill of the run: exiting runs the shared exit guard, which kills every target.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => process.exit(130));
}

export interface Target {
  name: string;
  child: ChildProcess;
  pid: number;
  port: number;
  url: string;
  /** performance.now() when the process was spawned. */
  spawnedAt: number;
  /** Everything the child printed, for the error message when it dies early. */
  output: () => string;
  stop: () => Promise<void>;
}

export function startTarget(name: string, command: string, args: string[], port: number, env: NodeJS.ProcessEnv = {}): Target {
  const spawnedAt = performance.now();
  // Only the tail matters for diagnosing a failed start; Prism in particular logs every request.
  const { child, output } = spawnProcess(command, args, { env, outputLimit: 20_000 });
  const stop = () => stopProcess(child);
  return { name, child, pid: child.pid!, port, url: `http://127.0.0.1:${port}`, spawnedAt, output, stop };
}

function died(target: Target): Error | null {
  const { exitCode, signalCode } = target.child;
  if (exitCode === null && signalCode === null) return null;
  return new Error(`${target.name} exited (${exitCode ?? signalCode}) before answering:\n${target.output()}`);
}

/** Resolves once the port accepts a TCP connection. */
export async function waitForListening(target: Target, timeoutMs = 60_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const error = died(target);
    if (error) throw error;
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(target.port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (performance.now() > deadline) throw new Error(`${target.name} did not listen within ${timeoutMs} ms:\n${target.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Polls `path` until it answers 200; resolves with the time of that answer. */
export async function waitFor200(target: Target, path: string, headers: Record<string, string>, timeoutMs = 60_000): Promise<number> {
  await waitForHttp(target.name, target, `${target.url}${path}`, {
    headers,
    timeoutMs,
    intervalMs: 5,
    ready: (response) => {
      if (response.status === 200) return true;
      if (response.status !== 404 && response.status !== 503) {
        throw new Error(`${target.name} answered ${response.status} to GET ${path}:\n${target.output()}`);
      }
      return false;
    },
  });
  return performance.now();
}

/** Resident set size in MiB, as the kernel reports it for the process (VmRSS). */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
  if (!kb) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kb) / 1024;
}
