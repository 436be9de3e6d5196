// Child processes for the benchmark targets: each target gets its own process (so it never shares the event loop
// with autocannon), listens on 127.0.0.1 on a port we found free, and is killed at the end whatever happens.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';

const children = new Set<ChildProcess>();

function killAll(signal: NodeJS.Signals): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  }
}

// 'exit' handlers must be synchronous, so SIGKILL there: the process is going away and cannot wait for a clean stop.
process.on('exit', () => killAll('SIGKILL'));
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    killAll('SIGKILL');
    process.exit(130);
  });
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
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
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  children.add(child);
  let output = '';
  const keep = (chunk: Buffer) => {
    // Only the tail matters for diagnosing a failed start; Prism in particular logs every request.
    output = (output + chunk.toString('utf8')).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  child.once('exit', () => children.delete(child));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };
  return { name, child, pid: child.pid!, port, url: `http://127.0.0.1:${port}`, spawnedAt, output: () => output, stop };
}

export async function stopAll(): Promise<void> {
  await Promise.all([...children].map(async (child) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }));
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
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const error = died(target);
    if (error) throw error;
    try {
      const response = await fetch(`${target.url}${path}`, { headers });
      await response.arrayBuffer();
      if (response.status === 200) return performance.now();
      if (response.status !== 404 && response.status !== 503) {
        throw new Error(`${target.name} answered ${response.status} to GET ${path}:\n${target.output()}`);
      }
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
    }
    if (performance.now() > deadline) throw new Error(`${target.name} did not answer 200 within ${timeoutMs} ms:\n${target.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Resident set size in MiB, as the kernel reports it for the process (VmRSS). */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
  if (!kb) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kb) / 1024;
}
