// Child processes for the benchmark targets: each target gets its own process (so it never shares the event loop
// with autocannon), listens on 127.0.0.1 on a port we found free, and is killed at the end whatever happens.
import { type ChildProcess, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { readFile, unlink } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { connect } from 'node:net';
import { spawnProcess, stopProcess, waitForHttp } from '../../scripts/lib/processes.js';

export { freePort, stopAllProcesses as stopAll } from '../../scripts/lib/processes.js';

// Ctrl-C or a kill of the run: exiting runs the shared exit guard, which kills every target.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => process.exit(130));
}

/**
 * Pinning, where `taskset` exists and there are two cores or more: the load generator (this process, autocannon
 * in-process) on core 0, every target on core 1, so neither steals the other's core. Otherwise nothing is pinned.
 */
export const pinning = availableParallelism() >= 2 && spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status === 0
  ? { load: '0', servers: '1', all: '0,1' }
  : null;

/** Moves every thread of process `pid` (this one by default) to `cores`; false when not pinning. */
export function pin(cores: string, pid = process.pid): boolean {
  if (!pinning) return false;
  const result = spawnSync('taskset', ['-a', '-p', '-c', cores, String(pid)], { stdio: 'ignore' });
  if (result.status !== 0) throw new Error(`taskset -a -p -c ${cores} ${pid} failed (exit ${result.status})`);
  return true;
}

/**
 * Moves process `pid` and its children to `cores` (PostgreSQL: the postmaster and its backends; backends forked
 * later inherit the postmaster's cores); false when not pinning. A child that ends meanwhile is no longer there to move.
 */
export function pinWithChildren(cores: string, pid: number): boolean {
  if (!pin(cores, pid)) return false;
  for (const child of childrenOf(pid)) spawnSync('taskset', ['-a', '-p', '-c', cores, String(child)], { stdio: 'ignore' });
  return true;
}

function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The parent is the second field after the command, which is in parentheses and may hold spaces.
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) children.push(Number(entry));
    } catch {
      // Ended while listing.
    }
  }
  return children;
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

export function startTarget(name: string, command: string, args: string[], port: number, env: NodeJS.ProcessEnv = {}, cwd?: string): Target {
  const spawnedAt = performance.now();
  // Only the tail matters for diagnosing a failed start; Prism in particular logs every request.
  // taskset execs the command, so the child's pid is the server's own.
  const [file, argv] = pinning ? ['taskset', ['-c', pinning.servers, command, ...args]] : [command, args];
  const { child, output } = spawnProcess(file, argv, { env, outputLimit: 20_000, ...(cwd ? { cwd } : {}) });
  const stop = () => stopProcess(child);
  return { name, child, pid: child.pid!, port, url: `http://127.0.0.1:${port}`, spawnedAt, output, stop };
}

/**
 * Stops a target that runs its server in a child of its own (npm, then a shell, then node): SIGTERM to every
 * descendant, deepest first, then the target itself; a signal to npm alone may leave the server running.
 */
export async function stopTree(target: Target): Promise<void> {
  const tree: number[] = [];
  const walk = (pid: number) => {
    for (const child of childrenOf(pid)) {
      walk(child);
      tree.push(child);
    }
  };
  walk(target.pid);
  for (const pid of tree) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // Already gone.
    }
  }
  await target.stop();
  // Until each is gone, so the next start has the machine (and its port) to itself.
  for (const pid of tree) {
    for (let i = 0; i < 500 && alive(pid); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    if (alive(pid)) process.kill(pid, 'SIGKILL');
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
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

/**
 * CPU time the process has used so far, user and system, every thread (libuv's pool too), in milliseconds: from
 * /proc/<pid>/stat, in clock ticks of 10 ms. Over a run, divided by the answers, it is what each request cost the
 * server, which other load on the machine changes far less than it changes the rate.
 */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // utime and stime, the 14th and 15th fields: the 12th and 13th after the command, which is in parentheses.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Resident set size in MiB, as the kernel reports it for the process (VmRSS). */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
  if (!kb) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kb) / 1024;
}

/**
 * A file server's store stats so far: its acknowledged commits and durable writes (journal syncs and compactions),
 * which it writes to `file` (its TOKENBELL_STORE_STATS) on SIGUSR2.
 */
export async function storeStats(target: Target, file: string): Promise<{ acknowledged: number; fileWrites: number }> {
  await unlink(file).catch(() => undefined);
  target.child.kill('SIGUSR2');
  for (let i = 0; i < 500; i++) {
    try {
      return JSON.parse(await readFile(file, 'utf8')) as { acknowledged: number; fileWrites: number };
    } catch {
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  throw new Error(`${target.name} wrote no store stats to ${file} after SIGUSR2`);
}
