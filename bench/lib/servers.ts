// The targets the sections start: the built server on a JSON file, on PostgreSQL or in memory on a seed, the bare
// Express ceiling, node-oidc-provider, and the helpers that run on the servers' core. All of them from this checkout.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { type Target, freePort, pinning, startTarget, waitFor200 } from './processes.js';
import { log } from './figures.js';
import { client } from './store.js';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** The build `npm start` runs: the bench measures dist, never the sources through tsx. */
export const cli = join(root, 'packages/server/dist/cli/index.js');
// Production settings: no --validate-responses, NODE_ENV=production.
const production = { NODE_ENV: 'production' };

/**
 * What `npm start` builds, built as `npm start` builds it (scripts/start.mjs, which records what it built from), so
 * that the `npm start` the start-up section measures is a second start with nothing changed. `--version` only prints.
 */
export function build(): void {
  log('building the SDK and the server as npm start does (npm start -- --version)');
  const result = spawnSync('npm', ['start', '--silent', '--', '--version'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  if (result.status !== 0) throw new Error(`the build failed (exit ${result.status})`);
}

// Under node_modules, so the compiled targets resolve their packages (express, oidc-provider, ...) from the root's.
const compiled = join(root, 'node_modules/.cache/tokenbell-bench');

/**
 * Compiles bench/targets/*.ts to plain JavaScript (local imports bundled, packages left to node_modules). Run through
 * tsx instead, a target would carry tsx's loader thread and its compiling in every figure: about 45 MiB more RSS and
 * seconds more start-up for bare Express on this machine, which would flatter tokenbell beside it.
 */
export function compileTargets(): void {
  const names = readdirSync(join(root, 'bench/targets')).filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3));
  for (const name of names) {
    buildSync({ entryPoints: [join(root, `bench/targets/${name}.ts`)], outfile: targetScript(name), bundle: true, packages: 'external', format: 'esm', platform: 'node', target: 'node20', logLevel: 'error' });
  }
}

/** A target compiled by compileTargets(). */
export const targetScript = (name: string) => join(compiled, `${name}.mjs`);

export async function startServer(name: string, dataFile: string, env: NodeJS.ProcessEnv = {}): Promise<Target> {
  const port = await freePort();
  return startTarget(name, process.execPath, [cli, '--port', String(port), '--data', dataFile], port, { ...production, ...env });
}

export async function startPostgresServer(name: string, databaseUrl: string): Promise<Target> {
  const port = await freePort();
  return startTarget(name, process.execPath, [cli, '--port', String(port), '--database-url', databaseUrl], port, production);
}

/** `tokenbell --memory --seed`, what a test suite that spawns the server starts. */
export async function startSeeded(seed: string, extra: string[] = []): Promise<Target> {
  const port = await freePort();
  return startTarget('tokenbell --memory --seed', process.execPath, [cli, '--memory', '--seed', seed, '--port', String(port), ...extra], port, production);
}

/** bench/targets/ceiling.ts with its answers (the GET's, then the form POSTs'), not waited for. */
export async function startCeiling(name: string, answers: string[]): Promise<Target> {
  const port = await freePort();
  return startTarget(name, process.execPath, [targetScript('ceiling'), String(port), ...answers], port, production);
}

export interface Peer {
  target: Target;
  /** Refresh and access tokens minted through the peer's own models, on its control port. */
  mint: (refresh: number, access: number) => Promise<{ refreshTokens: string[]; accessTokens: string[] }>;
}

/** The path the bench waits on for node-oidc-provider: its discovery document, answered once it is up. */
export const peerReadyPath = '/.well-known/openid-configuration';

/** node-oidc-provider (bench/targets/peer-oidc-provider.ts) spawned, not waited for; and its control port. */
export async function spawnPeer(): Promise<{ target: Target; controlPort: number }> {
  const port = await freePort();
  const controlPort = await freePort();
  const target = startTarget('node-oidc-provider', process.execPath, [targetScript('peer-oidc-provider'), String(port), String(controlPort), client.id, client.secret], port, production);
  return { target, controlPort };
}

/** Starts node-oidc-provider and returns it, answering, with its minting route. */
export async function startPeer(): Promise<Peer> {
  const { target, controlPort } = await spawnPeer();
  await waitFor200(target, peerReadyPath, {}, 60_000);
  const mint = async (refresh: number, access: number) => {
    const response = await fetch(`http://127.0.0.1:${controlPort}/mint?refresh=${refresh}&access=${access}`, { method: 'POST' });
    if (response.status !== 200) throw new Error(`the peer's mint answered ${response.status}: ${await response.text()}`);
    return (await response.json()) as { refreshTokens: string[]; accessTokens: string[] };
  };
  return { target, mint };
}

/** A helper run on the servers' core, in a process of its own: `node [NODE_ARGS] NAME.mjs ARGS` (compiled from bench/targets), its JSON line. */
export function runOnServerCore<T>(name: string, args: string[], nodeArgs: string[] = []): T {
  const command = [process.execPath, ...nodeArgs, targetScript(name), ...args];
  const [file, argv] = pinning ? ['taskset', ['-c', pinning.servers, ...command]] : [command[0]!, command.slice(1)];
  const result = spawnSync(file, argv, { cwd: root, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${name} failed (exit ${result.status}): ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}
