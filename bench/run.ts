// `npm run bench [-- --quick] [-- --json FILE] [-- --only read,sdk,write,token,postgres,testing,soak]`: starts every target as a child process on 127.0.0.1, warms each
// up, measures in interleaved rounds (so drift from other work on the machine hits every target alike), and prints
// one table of medians plus ratios taken within this run. See bench/README.md for what each figure means and which
// module of bench/sections measures it.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startCluster } from '../test/support/postgres.js';
import { type Run, configFor } from './lib/config.js';
import { figures, log, notes, record } from './lib/figures.js';
import { placeCluster } from './lib/postgres.js';
import { pin, pinning, stopAll } from './lib/processes.js';
import { build, compileTargets } from './lib/servers.js';
import { generateStore } from './lib/store.js';
import { readBenchmark, writeBenchmark } from './sections/api.js';
import { memoryBenchmark } from './sections/memory.js';
import { passwordBenchmark } from './sections/password-grant.js';
import { postgresBenchmark } from './sections/postgres.js';
import { sdkBenchmark } from './sections/sdk.js';
import { soakBenchmark } from './sections/soak.js';
import { coldStart, npmStartVsCli } from './sections/start-up.js';
import { testingBenchmark } from './sections/testing.js';
import { tokenBenchmark } from './sections/token-endpoint.js';
import { table } from './table.js';

const { values: flags } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, json: { type: 'string' }, only: { type: 'string' } },
  strict: true,
});
const quick = flags.quick!;
const sections = ['read', 'sdk', 'write', 'token', 'postgres', 'testing', 'soak'] as const;
// `--only` runs some sections (to work on one figure); the table shows '-' for figures it did not measure.
const only = new Set(flags.only ? flags.only.split(',').map((s) => s.trim()) : sections);
for (const s of only) {
  if (!(sections as readonly string[]).includes(s)) {
    process.stderr.write(`bench: --only ${s}: unknown section; use some of ${sections.join(', ')}\n`);
    process.exit(2);
  }
}
const config = configFor(quick);

async function runSections(run: Run): Promise<void> {
  if (only.has('read') || only.has('sdk')) {
    log('generating the 1k read store');
    const readStore = await generateStore(join(run.work, 'read.json'), { users: 1_000 });
    // First, while nothing else of the bench runs: npm start runs a build of its own.
    await npmStartVsCli(run);
    const reference = await coldStart(run, readStore);
    if (only.has('read')) await readBenchmark(run, reference, readStore);
    if (only.has('sdk')) await sdkBenchmark(run, reference, readStore);
    await reference.stop();
  }
  if (only.has('write')) await writeBenchmark(run);
  if (only.has('token') || only.has('postgres')) {
    log('starting a durable PostgreSQL cluster');
    const cluster = await startCluster({ durable: true });
    // Beside the servers and the load generator on both cores, as the PostgreSQL targets assume.
    placeCluster(cluster, 'all');
    try {
      if (only.has('token')) {
        await tokenBenchmark(run, cluster);
        await passwordBenchmark(run);
        await memoryBenchmark(run, cluster);
      }
      if (only.has('postgres')) await postgresBenchmark(run, cluster);
    } finally {
      await cluster.stop();
    }
  }
  if (only.has('testing')) await testingBenchmark(run);
  if (only.has('soak')) await soakBenchmark(run);
}

async function main(): Promise<void> {
  const began = performance.now();
  const work = await mkdtemp(join(tmpdir(), 'tokenbell-bench-'));
  // The load generator (autocannon, in this process) on one core, every server on the other (lib/processes.ts).
  notes.push(
    pin(pinning?.load ?? '')
      ? `pinning: taskset: this process (autocannon, tinybench, the in-process test kit) on core ${pinning!.load}; every server, node-oidc-provider, bare Express and the KDF runs on core ${pinning!.servers}; PostgreSQL on both (cores ${pinning!.all}) but for the rows that say it is on the servers' core`
      : 'pinning: not pinned (no taskset, or fewer than 2 cores): load generator and servers share the cores',
  );
  try {
    build();
    compileTargets();
    await runSections({ quick, config, work });
    record('total_seconds', (performance.now() - began) / 1000);
    process.stdout.write(`${table(quick, config)}\n`);
    if (flags.json) {
      await mkdir(dirname(resolve(flags.json)), { recursive: true });
      await writeFile(flags.json, `${JSON.stringify({ mode: quick ? 'quick' : 'full', config, figures, notes }, null, 2)}\n`);
    }
  } finally {
    await stopAll();
    await rm(work, { recursive: true, force: true });
  }
}

main().catch(async (error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  await stopAll();
  process.exit(1);
});
