// The contract suite's targets as real processes: the reference server from its CLI as it ships (this run's bundle),
// Prism's mock and Prism's validating proxy, each on 127.0.0.1 and a free port, stopped afterwards even when the run
// dies half-way.
import { mkdtemp, rename, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { openapiPath, repoRoot } from '../../scripts/lib/paths.js';
import { freePort, spawnProcess, stopProcess, waitForHttp } from '../../scripts/lib/processes.js';
import { setDatabaseReadOnly } from '../support/postgres.js';
import { writeContractSeed } from './seed.js';

const serverCli = inject('serverCli');
const mockScript = join(repoRoot, 'scripts/mock.ts');
// Prism's own entry point rather than npx: one process per target, so killing its pid leaves nothing behind.
const prismCli = join(repoRoot, 'node_modules/@stoplight/prism-cli/dist/index.js');

export interface RunningProcess {
  name: string;
  baseUrl: string;
  /** The last lines the process printed, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * How long one target may take from its spawn to its first answer. A start costs 2 to 4 s of CPU (tsx, the document,
 * the validators' warm-up); this leaves room for a 2-core machine loaded many times over, and still names a process
 * that hangs within a minute.
 */
const startTimeoutMs = 60_000;

// Started all at once (nine targets in the file store's run, beside the rest of the suite), the targets queued for two
// cores, and a bound counted from each spawn ran out while a process was still waiting its turn, not hung. So no more
// start at once than there are cores, and each bound times one start.
const startSlots = availableParallelism();
let starting = 0;
const waitingToStart: Array<() => void> = [];

async function startSlot(): Promise<() => void> {
  if (starting < startSlots) starting += 1;
  // The slot passes straight from the start that ends to the next in line.
  else await new Promise<void>((resolve) => waitingToStart.push(resolve));
  return () => {
    const next = waitingToStart.shift();
    if (next) next();
    else starting -= 1;
  };
}

/**
 * A bound for a hook that starts targets, `phases` of so many at once one after the other: past every start's own
 * bound, so that a start that fails is named before the hook times out. The rest (seed files, databases, stopping what
 * started after a failure) has half a minute.
 */
export const startupTimeoutMs = (...phases: number[]): number => phases.reduce((sum, count) => sum + Math.ceil(count / startSlots) * startTimeoutMs, 30_000);

/** `launch` names the process and gives its arguments for a free port, taken once it may start (so nobody takes it meanwhile). */
async function start(launch: (port: number) => { name: string; args: string[] } | Promise<{ name: string; args: string[] }>, readyPath: string, cleanup?: () => Promise<void>): Promise<RunningProcess> {
  const release = await startSlot();
  try {
    const port = await freePort();
    const { name, args } = await launch(port);
    const spawned = spawnProcess(process.execPath, args, { cwd: repoRoot, env: { NO_COLOR: '1', FORCE_COLOR: '0' }, outputLimit: 20_000 });
    const baseUrl = `http://127.0.0.1:${port}`;
    const stop = async () => {
      await stopProcess(spawned.child);
      await cleanup?.();
    };
    try {
      // A limit per attempt, so that one request left hanging cannot use up the whole wait.
      await waitForHttp(name, spawned, baseUrl + readyPath, { timeoutMs: startTimeoutMs, attemptTimeoutMs: 2_000 });
    } catch (error) {
      await stop();
      throw error;
    }
    return { name, baseUrl, output: spawned.output, stop };
  } finally {
    release();
  }
}

const readyPath = '/.well-known/oauth-authorization-server';

export interface ReferenceServerOptions {
  /**
   * Makes the server check its own answers (a broken one becomes a 500); off behind the proxy, so that Prism judges
   * what the server really sends.
   */
  validateResponses?: boolean;
  /** `--monitoring-allowlist`: who may read the `/-/` operations endpoints (loopback by default). */
  monitoringAllowlist?: string;
  /** `--test-helpers`: serve the test-helper area to administrators (on by default; off, it answers 404). */
  testHelpers?: boolean;
  /** A fresh migrated PostgreSQL database to serve from (`--database-url`), dropped when the server stops. */
  database?: () => Promise<{ url: string; drop(): Promise<void> }>;
}

export interface ReferenceServer extends RunningProcess {
  /**
   * Makes its store unable to take writes, so that readiness answers 503, and answers the function that undoes it.
   * Meant for one request in between.
   */
  storeUnwritable(): Promise<() => Promise<void>>;
}

/**
 * The reference server from its CLI, on a fresh data file (or `database`) loaded from the contract seed (the example
 * fixture, a public application and an administrator, see seed.ts), with test helpers on unless `testHelpers: false`.
 */
export async function startReferenceServer({ validateResponses = true, monitoringAllowlist, testHelpers = true, database: fresh }: ReferenceServerOptions = {}): Promise<ReferenceServer> {
  const dir = await mkdtemp(join(tmpdir(), 'tokenbell-contract-'));
  let database: Awaited<ReturnType<NonNullable<typeof fresh>>> | undefined;
  const cleanup = async () => {
    await rm(dir, { recursive: true, force: true });
    await database?.drop();
  };
  let seed: string;
  try {
    seed = await writeContractSeed(dir);
    database = await fresh?.();
  } catch (error) {
    await cleanup();
    throw error;
  }
  const where = database ? ['--database-url', database.url] : ['--data', join(dir, 'data.json')];
  const options: string[] = [];
  if (validateResponses) options.push('--validate-responses');
  if (monitoringAllowlist) options.push('--monitoring-allowlist', monitoringAllowlist);
  if (testHelpers) options.push('--test-helpers');
  const differences = [monitoringAllowlist ? `monitoring allowlist ${monitoringAllowlist}` : undefined, testHelpers ? undefined : 'without test helpers'].filter(Boolean);
  const launch = (port: number) => ({
    name: `reference server${differences.length > 0 ? ` (${differences.join(', ')})` : ''}${database ? ' on PostgreSQL' : ''} :${port}`,
    args: [serverCli, ...where, '--seed', seed, '--port', String(port), '--host', '127.0.0.1', ...options],
  });
  const server = await start(launch, readyPath, cleanup);
  const url = database?.url;
  return {
    ...server,
    async storeUnwritable() {
      if (url) {
        // A database that takes no writes, as a standby would be.
        await setDatabaseReadOnly(url, true);
        return () => setDatabaseReadOnly(url, false);
      }
      // Renaming, not deleting: chmod does not stop root, and the directory has to come back for the cases after.
      const away = `${dir}.away`;
      await rename(dir, away);
      return () => rename(away, dir);
    },
  };
}

/**
 * The mock as `npm run mock` runs it (scripts/mock.ts, without npm's shell in between): Prism on the mock's document
 * for its own address (scripts/lib/mock-document.ts: the `/api/v4` copies, its base URL in the examples, the server's
 * CORS headers), answering the examples, never generated data, and without Prism's own CORS headers, behind the front
 * that carries the authorization redirect (scripts/lib/mock-front.ts). Stopping the script stops its Prism.
 */
export function startPrismMock(): Promise<RunningProcess> {
  return start((port) => ({ name: `prism mock :${port}`, args: ['--import', 'tsx', mockScript, '--port', String(port), '--host', '127.0.0.1', '-v', 'warn'] }), readyPath);
}

/**
 * `prism proxy --errors` in front of `upstream`: a request or an answer that breaks the document becomes Prism's
 * own error response. `validateRequest: false` forwards requests that break the document on purpose, so the
 * server's own 400 still meets Prism's response validation.
 */
export function startPrismProxy(upstream: string, { validateRequest = true } = {}): Promise<RunningProcess> {
  return start(
    (port) => ({
      name: `prism proxy${validateRequest ? '' : ' (--validate-request=false)'} :${port}`,
      args: [prismCli, 'proxy', openapiPath, upstream, '--errors', '-h', '127.0.0.1', '-p', String(port), '-v', 'warn', ...(validateRequest ? [] : ['--validate-request=false'])],
    }),
    readyPath,
  );
}
