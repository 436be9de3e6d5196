// The contract suite's targets as real processes: the reference server from its CLI, Prism's mock and Prism's
// validating proxy, each on 127.0.0.1 and a free port, stopped afterwards even when the run dies half-way.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openapiPath, repoRoot } from '../../scripts/lib/paths.js';

const serverCli = join(repoRoot, 'packages/server/src/cli.ts');
const exampleSeed = join(repoRoot, 'packages/server/fixtures/example-seed.json');
// Prism's own entry point rather than npx: one process per target, so killing its pid leaves nothing behind.
const prismCli = join(repoRoot, 'node_modules/@stoplight/prism-cli/dist/index.js');

export interface RunningProcess {
  name: string;
  baseUrl: string;
  /** The last lines the process printed, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
// A crashed or interrupted run never reaches afterAll; whatever is still running dies with this process.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** A port nobody listens on right now: bind port 0 on loopback, read the number, let it go. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => probe.once('error', reject).listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port from the probe');
  return address.port;
}

async function start(name: string, args: string[], port: number, readyPath: string, cleanup?: () => Promise<void>): Promise<RunningProcess> {
  const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } });
  running.add(child);
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString().split('\n').filter(Boolean));
    if (lines.length > 200) lines.splice(0, lines.length - 200);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  void exited.then(() => running.delete(child));

  const baseUrl = `http://127.0.0.1:${port}`;
  const output = () => lines.join('\n');
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    await cleanup?.();
  };

  const deadline = Date.now() + 45_000;
  let exitCode: number | null | undefined;
  void exited.then((code) => (exitCode = code));
  for (;;) {
    if (exitCode !== undefined) {
      await cleanup?.();
      throw new Error(`${name} exited with ${exitCode} before answering:\n${output()}`);
    }
    const ok = await fetch(baseUrl + readyPath, { signal: AbortSignal.timeout(2_000) }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return { name, baseUrl, output, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${name} did not answer ${readyPath} within 45 s:\n${output()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

const readyPath = '/.well-known/oauth-authorization-server';

/**
 * The reference server from its CLI, on a fresh data file loaded from the example fixture. `validateResponses`
 * makes it check its own answers (a broken one becomes a 500); off behind the proxy, so that Prism judges what the
 * server really sends.
 */
export async function startReferenceServer({ validateResponses = true } = {}): Promise<RunningProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'tokenbell-contract-'));
  const port = await freePort();
  const args = ['--import', 'tsx', serverCli, '--data', join(dir, 'data.json'), '--seed', exampleSeed, '--port', String(port), '--host', '127.0.0.1'];
  if (validateResponses) args.push('--validate-responses');
  return start(`reference server :${port}`, args, port, readyPath, () => rm(dir, { recursive: true, force: true }));
}

/** `prism mock`: answers the document's examples, never generated data. */
export async function startPrismMock(): Promise<RunningProcess> {
  const port = await freePort();
  return start(`prism mock :${port}`, [prismCli, 'mock', openapiPath, '--dynamic=false', '-h', '127.0.0.1', '-p', String(port), '-v', 'warn'], port, readyPath);
}

/**
 * `prism proxy --errors` in front of `upstream`: a request or an answer that breaks the document becomes Prism's
 * own error response. `validateRequest: false` forwards requests that break the document on purpose, so the
 * server's own 400 still meets Prism's response validation.
 */
export async function startPrismProxy(upstream: string, { validateRequest = true } = {}): Promise<RunningProcess> {
  const port = await freePort();
  const args = [prismCli, 'proxy', openapiPath, upstream, '--errors', '-h', '127.0.0.1', '-p', String(port), '-v', 'warn'];
  if (!validateRequest) args.push('--validate-request=false');
  return start(`prism proxy${validateRequest ? '' : ' (--validate-request=false)'} :${port}`, args, port, readyPath);
}
