// The printed result: one table of load runs (medians with the lowest and highest round), the other figures, the
// ratios taken within this run, and the notes. A figure a run did not measure (`--only`) prints as '-'.
import { cpus } from 'node:os';
import { type Config, tokenConnectionCounts, tokenConnections } from './lib/config.js';
import { figures, fmt, notes, spreads } from './lib/figures.js';
import { postgresVariants } from './sections/postgres.js';
import { soakConnections, soakRates } from './sections/soak.js';
import { tokenTargets } from './sections/token-endpoint.js';

type Pairs = Array<[string, string]>;

/** A figure as `format` gives it, with the lowest and highest round when they differ from it. */
function withSpread(key: string, format: (value: number | undefined) => string): string {
  const spread = spreads[key];
  const text = format(figures[key]);
  if (!spread || spread[0] === spread[1]) return text;
  return `${text} (${format(spread[0])}-${format(spread[1])})`;
}
const pct = (key: string) => `${withSpread(key, (v) => fmt(v === undefined ? v : v * 100))} %`;
const times = (key: string, digits = 2) => `${withSpread(key, (v) => fmt(v, digits))}x`;

export function table(quick: boolean, config: Config): string {
  const kv = (list: Pairs) => {
    const w = Math.max(...list.map(([k]) => k.length));
    return list.map(([k, v]) => `${k.padEnd(w)}  ${v}`);
  };
  return [
    `tokenbell benchmarks (${quick ? 'quick' : 'full'}: medians of ${config.rounds} round(s), ${config.seconds} s per run; server from packages/server/dist; Node ${process.version}, ${cpus().length} CPUs)`,
    '',
    ...render(loadRows(config)),
    '',
    ...kv([...apiExtras(config), ...tokenAndKitExtras(config)]),
    '',
    'Ratios (within this run; ratio figures are medians of per-round ratios)',
    ...kv([...apiRatios(config), ...tokenAndKitRatios()]),
    '',
    `Issue 34 targets (this run; median (min-max) over rounds)`,
    ...render(issue34Rows()),
    '',
    'Issue 42 targets (this run; median (min-max) over rounds; memory figures are single readings or medians of readings)',
    ...render(issue42Rows()),
    ...issue42Bounds(),
    ...(notes.length ? ['', 'Notes', ...notes.map((n) => `  ${n}`)] : []),
  ].join('\n');
}

function render(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(' | ');
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('-|-'), ...rows.slice(1).map(line)];
}

function loadRows(config: Config): string[][] {
  const rows: string[][] = [['benchmark', 'target / case', 'conns', 'store', 'req/s (min-max)', 'p50 ms', 'p99 ms', 'failed', 'acks/file write']];
  // autocannon records whole milliseconds, so a p50 of 0 means under a millisecond.
  const line = (section: string, label: string, conns: string, store: string, prefix: string) =>
    rows.push([
      section,
      label,
      conns,
      store,
      withSpread(`${prefix}.rps`, (v) => fmt(v)),
      fmt(figures[`${prefix}.p50_ms`]),
      fmt(figures[`${prefix}.p99_ms`]),
      fmt(figures[`${prefix}.failed`]),
      prefix.startsWith('write.') ? fmt(figures[`${prefix}.commits_per_file_write`], 1) : '',
    ]);
  for (const c of config.connections) {
    line('API read', 'reference server (auth + validation)', String(c), '1k', `read.reference.c${c}`);
    line('API read', 'bare Express 5 (ceiling)', String(c), '-', `read.ceiling.c${c}`);
    line('API read', 'Prism mock --dynamic=false', String(c), '-', `read.prism.c${c}`);
  }
  for (const u of config.stores) {
    for (const c of config.connections) line('API write', 'PUT project settings (durable)', String(c), `${u / 1000}k`, `write.u${u}.c${c}`);
  }
  for (const key of ['success', 'unauthenticated_401', 'malformed_400']) {
    const label = { success: 'GET answered 200', unauthenticated_401: 'GET without a token (401)', malformed_400: 'PUT with an invalid level (400)' }[key];
    line('API errors', `reference server: ${label}`, '50', '1k', `errors.${key}.c50`);
  }
  for (const c of tokenConnectionCounts) {
    for (const [grant, label] of [['refresh_token', 'refresh grant'], ['introspection', 'introspection']] as const) {
      for (const t of tokenTargets) line(`Token: ${label}`, t.label, String(c), t.key === 'file' || t.key === 'postgres' ? '1k' : '-', `token.${grant}.c${c}.${t.key}`);
    }
  }
  for (const k of ['file', 'postgres'] as const) line('Token: code grant', tokenTargets.find((t) => t.key === k)!.label, String(tokenConnections), '1k', `token.authorization_code.c${tokenConnections}.${k}`);
  for (const c of tokenConnectionCounts) line('Token: password grant', `right passwords, one address (429s: ${fmt(figures[`token.password.c${c}.status_429`])})`, String(c), '1k', `token.password.c${c}`);
  line('Password storm', 'GET alone', '10', '1k', 'token.get_quiet.c10');
  line('Password storm', 'GET during a password-grant storm', '10', '1k', 'token.get_during_password_storm.c10');
  line('Password storm', `the storm (429s: ${fmt(figures['token.password_storm.c50.status_429'])})`, '50', '1k', 'token.password_storm.c50');
  for (const [label, id, conns] of [
    ['authenticated GET', 'read.c10', '10'],
    ['authenticated GET', 'read.c50', '50'],
    ['PUT project settings (durable)', 'write.c50', '50'],
  ] as const) {
    line('Store: JSON file', label, conns, '1k', `postgres.${id}.file`);
    for (const v of postgresVariants) line('Store: PostgreSQL', `${label}, ${v.label}`, conns, '1k', `postgres.${id}.${v.key}`);
  }
  return rows;
}

/** The SDK, cold starts, read and write servers' figures. */
function apiExtras(config: Config): Pairs {
  const extra: Pairs = [
    ['SDK: plain fetch, p50 per call', `${fmt(figures['sdk.fetch.p50_ms'], 3)} ms`],
    ['SDK: client.notificationSettings.global.get(), p50 per call', `${fmt(figures['sdk.client.p50_ms'], 3)} ms`],
    ...(['memory', 'file'] as const).flatMap((kind): Pairs => [
      [`Cold start, ${kind === 'memory' ? 'tokenbell --memory (contract seed)' : 'JSON file (1k users)'}: spawn -> first 200, median (min-max) of ${config.coldStarts}`, `${withSpread(`cold.${kind}.spawn_to_first_200_ms`, (v) => fmt(v))} ms`],
      ['  of which spawn -> listening', `${withSpread(`cold.${kind}.spawn_to_listening_ms`, (v) => fmt(v))} ms`],
      ['  of which first request', `${withSpread(`cold.${kind}.first_request_ms`, (v) => fmt(v, 1))} ms`],
      ['  the same request again', `${withSpread(`cold.${kind}.second_request_ms`, (v) => fmt(v, 1))} ms`],
    ]),
    ['Cold start, PostgreSQL (1k users): spawn -> first 200', `${fmt(figures['postgres.spawn_to_first_200_ms'])} ms`],
    ['RSS: reference server after the read benchmark (1k store)', `${fmt(figures['rss.reference_after_read_mib'])} MiB`],
    ['RSS: Prism mock', `${fmt(figures['rss.prism_mib'])} MiB`],
  ];
  for (const u of config.stores) {
    extra.push([`Write server ${u / 1000}k: spawn -> first 200`, `${fmt(figures[`write.u${u}.spawn_to_first_200_ms`])} ms`]);
    extra.push([`Write server ${u / 1000}k: RSS after the write benchmark`, `${fmt(figures[`rss.write_u${u}_mib`])} MiB`]);
    extra.push([`Write server ${u / 1000}k: data file before / after`, `${fmt(figures[`write.u${u}.store_mib`], 1)} / ${fmt(figures[`write.u${u}.store_after_mib`], 1)} MiB`]);
    extra.push([
      `Write server ${u / 1000}k: acknowledged writes / file writes, all rounds`,
      `${fmt(figures[`write.u${u}.acknowledged`])} / ${fmt(figures[`write.u${u}.file_writes`])} = ${fmt(figures[`write.u${u}.commits_per_file_write`], 1)} per file write (2xx answered: ${fmt(figures[`write.u${u}.answered_2xx`])})`,
    ]);
  }
  return extra;
}

/** The PostgreSQL server's, the KDF's, the token servers' and the test kit's figures. */
function tokenAndKitExtras(config: Config): Pairs {
  const extra: Pairs = [['RSS: PostgreSQL server after its benchmark', `${fmt(figures['rss.postgres_server_mib'])} MiB`]];
  for (const c of tokenConnectionCounts) extra.push([`KDF alone (scrypt N=2^14, r=8, p=1, the server's verifyPassword), ${c} in flight`, `${fmt(figures[`token.kdf.c${c}.rps`])} checks/s`]);
  for (const c of tokenConnectionCounts) {
    const id = `token.refresh_token.c${c}.file`;
    extra.push([`Refresh grant on the file store, ${c} connections: acknowledged rotations / file writes, all rounds`, `${fmt(figures[`${id}.acknowledged`])} / ${fmt(figures[`${id}.file_writes`])} = ${fmt(figures[`${id}.commits_per_file_write`], 1)} per file write`]);
  }
  extra.push([
    'RSS: token servers after start / after their runs (file, PostgreSQL; pools loaded)',
    `${fmt(figures['rss.token_file_after_start_mib'])} / ${fmt(figures['rss.token_file_after_runs_mib'])} MiB, ${fmt(figures['rss.token_postgres_after_start_mib'])} / ${fmt(figures['rss.token_postgres_after_runs_mib'])} MiB`,
  ]);
  for (const t of tokenTargets) {
    extra.push([`RSS: ${t.label}, after start / after ${fmt(figures[`rss.${t.key}.requests`])} mixed requests`, `${fmt(figures[`rss.${t.key}.after_start_mib`])} / ${fmt(figures[`rss.${t.key}.after_mixed_mib`])} MiB`]);
  }
  const spread = (prefix: string) => `${fmt(figures[`${prefix}.median_ms`], 1)} ms (${fmt(figures[`${prefix}.min_ms`], 1)}-${fmt(figures[`${prefix}.max_ms`], 1)})`;
  extra.push(
    [`Test kit: startTokenbell() -> first authenticated answer, median (min-max) of ${config.kitStarts}`, spread('testing.start.to_first_answer')],
    ['  the first start in the process', `${fmt(figures['testing.start.first_in_process_ms'], 1)} ms`],
    ['  of which startTokenbell() resolves (seeding, listening)', `${fmt(figures['testing.start.resolved_ms'], 1)} ms`],
    ['  of which first request (validator warm-up)', `${fmt(figures['testing.start.first_request_ms'], 1)} ms`],
    ['  the same request again', `${fmt(figures['testing.start.second_request_ms'], 1)} ms`],
    ['  close()', `${fmt(figures['testing.start.close_ms'], 1)} ms`],
    ['Baseline: bare http.createServer -> first answer, in-process', spread('testing.baseline.bare_http')],
    [`Baseline: spawned tokenbell --memory --seed -> first 200, median (min-max) of ${config.coldStarts}`, spread('testing.baseline.spawned_cli')],
    [`Test kit: reset() after writes, memory store (${fmt(figures['testing.reset.store_kib'], 1)} KiB as JSON), median / p95 of ${fmt(figures['testing.reset.memory.rounds'])}`, `${fmt(figures['testing.reset.memory.median_ms'], 2)} / ${fmt(figures['testing.reset.memory.p95_ms'], 2)} ms`],
    ['  one PUT notification settings on the same instance, median', `${fmt(figures['testing.reset.memory.put_median_ms'], 2)} ms`],
    [`Test kit: reset() after writes, JSON data file, median / p95 of ${fmt(figures['testing.reset.file.rounds'])}`, `${fmt(figures['testing.reset.file.median_ms'], 2)} / ${fmt(figures['testing.reset.file.p95_ms'], 2)} ms`],
    ['  one durable PUT notification settings on the same instance, median', `${fmt(figures['testing.reset.file.put_median_ms'], 2)} ms`],
    [
      `Soak: JSON file (durable), ${fmt(figures['soak.seconds'])} s of reads, PUTs and userinfo (${soakConnections} conns), refresh rotations (${fmt(figures['soak.rotations'])}, ${soakRates.rotations}/s) and password grants (${fmt(figures['soak.password_grants'])}, ${soakRates.passwordGrants}/s)`,
      `${fmt(figures['soak.requests'])} requests (${fmt(figures['soak.rps'])}/s, median slice), ${fmt(figures['soak.failed'])} failed; p99 ${fmt(figures['soak.p99_early_ms'])} ms early, ${fmt(figures['soak.p99_late_ms'])} ms late`,
    ],
    [
      '  RSS early / at the end / highest (bare Express after reads)',
      `${fmt(figures['soak.rss_early_mib'])} / ${fmt(figures['soak.rss_end_mib'])} / ${fmt(figures['soak.rss_max_mib'])} MiB (${fmt(figures['soak.ceiling_rss_mib'])} MiB)`,
    ],
    [
      '  JS heap used early / at the end (allocated), external memory',
      `${fmt(figures['soak.heap_used_early_mib'])} / ${fmt(figures['soak.heap_used_end_mib'])} MiB (${fmt(figures['soak.heap_total_early_mib'])} / ${fmt(figures['soak.heap_total_end_mib'])} MiB), ${fmt(figures['soak.external_early_mib'])} / ${fmt(figures['soak.external_end_mib'])} MiB`,
    ],
    [
      '  data file before / after, journal after',
      `${fmt(figures['soak.store_before_mib'], 1)} / ${fmt(figures['soak.store_after_mib'], 1)} MiB, ${fmt(figures['soak.journal_after_mib'], 1)} MiB`,
    ],
  );
  return extra;
}

/** Read, write, SDK and PostgreSQL ratios, with their targets. */
function apiRatios(config: Config): Pairs {
  const ratioRows: Pairs = [];
  for (const c of config.connections) {
    ratioRows.push([`read: reference / ceiling, ${c} conns (target >= 80%)`, `${pct(`ratio.read_vs_ceiling.c${c}`)}`]);
  }
  for (const c of config.connections) {
    ratioRows.push([`read: reference / Prism, ${c} conns (target >= 2.5x)`, `${times(`ratio.read_vs_prism.c${c}`)}`]);
  }
  for (const c of config.connections) {
    ratioRows.push([
      `read: server CPU per request, reference / ceiling, ${c} conns`,
      `${fmt(figures[`read.reference.c${c}.cpu_us_per_request`])} / ${fmt(figures[`read.ceiling.c${c}.cpu_us_per_request`])} us, ${times(`ratio.read_cpu_vs_ceiling.c${c}`)}`,
    ]);
  }
  const top = Math.max(...config.connections);
  if (config.stores.includes(10_000)) ratioRows.push([`write: 10k store, ${top} conns (target >= 2,000/s)`, `${fmt(figures[`write.u10000.c${top}.rps`])} writes/s`]);
  const smallest = config.stores[0]!;
  const largest = config.stores[config.stores.length - 1]!;
  if (largest > smallest) {
    ratioRows.push([
      `write: cost per write ${largest / 1000}k vs ${smallest / 1000}k store, ${top} conns (store ${largest / smallest}x)`,
      `${times(`ratio.write_cost_${largest}_vs_${smallest}.c${top}`)}, exponent ${fmt(figures[`ratio.write_cost_growth_exponent.c${top}`], 2)} (target < 1)`,
    ]);
  }
  ratioRows.push(['SDK overhead over plain fetch (target <= 10%)', `${fmt(figures['ratio.sdk_overhead_pct'], 1)} %`]);
  for (const [id, label, target] of [
    ['read.c10', 'read, 10 conns', 60],
    ['read.c50', 'read, 50 conns', 60],
    ['write.c50', 'durable write, 50 conns', 50],
  ] as const) {
    for (const v of postgresVariants) {
      const headline = v.key === 'postgres';
      ratioRows.push([`PostgreSQL (${v.label}) / JSON file, ${label}${headline ? ` (target >= ${target}%)` : ''}`, `${pct(`ratio.${v.key}_vs_file.${id}`)}`]);
    }
  }
  return ratioRows;
}

/** Token endpoint, error, password-grant, cold-start and test-kit ratios, with their targets. */
function tokenAndKitRatios(): Pairs {
  const ratioRows: Pairs = [];
  for (const [id, label] of [
    [`token.authorization_code.c${tokenConnections}`, 'code grant'],
    ...tokenConnectionCounts.flatMap((c) => [[`token.refresh_token.c${c}`, `refresh grant, ${c} conns`], [`token.introspection.c${c}`, `introspection, ${c} conns`]] as const),
  ] as const) {
    ratioRows.push([`PostgreSQL / JSON file, ${label}`, `${pct(`ratio.postgres_vs_file.${id}`)}`]);
  }
  for (const c of tokenConnectionCounts) {
    for (const grant of ['refresh_token', 'introspection'] as const) {
      for (const k of ['file', 'postgres'] as const) {
        ratioRows.push([
          `token ${grant}, ${c} conns: tokenbell ${k} / node-oidc-provider${grant === 'refresh_token' ? ' (target >= 1x on file)' : ''}`,
          `${times(`ratio.token.${grant}.c${c}.${k}_vs_peer`)}`,
        ]);
        ratioRows.push([
          `token ${grant}, ${c} conns: tokenbell ${k} / bare Express${grant === 'introspection' ? ' (target >= 90% on file)' : ''}`,
          `${pct(`ratio.token.${grant}.c${c}.${k}_vs_ceiling`)}`,
        ]);
      }
    }
  }
  for (const key of ['unauthenticated_401', 'malformed_400']) {
    ratioRows.push([`errors: ${key} / successful GETs, 50 conns (target >= 100%)`, `${pct(`ratio.errors_vs_success.${key}.c50`)}`]);
  }
  for (const c of tokenConnectionCounts) {
    ratioRows.push([`password grant / KDF alone, ${c} conns, one address (target >= 90%)`, `${pct(`ratio.password_vs_kdf.c${c}`)}`]);
  }
  ratioRows.push(['GET p99 during a password-grant storm / alone', `${times('ratio.get_p99_storm_vs_quiet')}`]);
  ratioRows.push(
    ['cold start, tokenbell --memory: spawn -> first 200 (target <= 300 ms)', `${fmt(figures['cold.memory.spawn_to_first_200_ms'])} ms`],
    ['cold start: first request / the same again (target <= 3x)', `${times('ratio.cold_first_vs_second_request')}`],
  );
  ratioRows.push(
    ['test kit start / spawned CLI start (same seed)', `${times('ratio.testing_start_vs_spawned_cli')}`],
    ['test kit start / bare http.createServer start', `${fmt(figures['ratio.testing_start_vs_bare_http'], 1)}x`],
    ['reset / one PUT, memory store', `${times('ratio.testing_reset_vs_put.memory')}`],
    ['reset / one durable PUT, JSON data file', `${times('ratio.testing_reset_vs_put.file')}`],
  );
  return ratioRows;
}

const ms = (key: string, digits = 0) => `${withSpread(key, (v) => fmt(v, digits))} ms`;
const mib = (key: string) => `${fmt(figures[key], 1)} MiB`;
const rate = (key: string) => `${withSpread(key, (v) => fmt(v))}/s`;

/** Whether a ratio meets its target: `yes`, `no`, or `-` when the run did not measure it. */
/** Whether this run met a target, or by how much it missed it: per cent of the target, or points of a percentage. */
function met(key: string, target: number, at: 'most' | 'least', unit: 'ratio' | 'points' = 'ratio'): string {
  const value = figures[key];
  if (value === undefined || !Number.isFinite(value)) return '-';
  if (at === 'most' ? value <= target : value >= target) return 'yes';
  return `no, by ${unit === 'points' ? `${fmt(Math.abs(value - target))} points` : `${fmt(Math.abs(value / target - 1) * 100)} %`}`;
}

/** A ratio with its spread over rounds, its target and whether this run met it. */
function ratio(key: string, target: number, at: 'most' | 'least', digits = 2): string[] {
  return [`${withSpread(key, (v) => fmt(v, digits))}x`, `${at === 'most' ? '<=' : '>='} ${target}`, met(key, target, at)];
}

/**
 * Issue 34's figures that issue 42 did not set again, one row each: the figure, what it is compared with in the same
 * run, the ratio and its target. Ratios of throughput are per-round medians; a memory figure is a single reading.
 */
function issue34Rows(): string[][] {
  const rows: string[][] = [['figure', 'same-run comparison', 'ratio', 'target', 'met']];
  rows.push([
    `tokenbell --memory --seed: first request after start ${ms('cold.memory.first_request_ms', 1)}`,
    `the same request again ${ms('cold.memory.second_request_ms', 1)}`,
    ...ratio('ratio.cold_first_vs_second_request', 2, 'most'),
  ]);
  rows.push([
    `RSS after start, tokenbell JSON file (1k users, refresh pool) ${mib('rss.file.after_start_mib')}`,
    `bare Express 5 after start ${mib('rss.ceiling.after_start_mib')}`,
    ...ratio('ratio.rss_after_start.file_vs_ceiling', 1.3, 'most'),
  ]);
  rows.push([`authenticated GET, 1 conn ${rate('read.reference.c1.rps')}`, `bare Express 5 ${rate('read.ceiling.c1.rps')}`, ...ratio('ratio.read_vs_ceiling.c1', 0.9, 'least')]);
  rows.push([
    `npm start (second, nothing changed): spawn -> /-/readiness 200 ${ms('cold.npm_start.spawn_to_ready_ms')}`,
    `node packages/server/dist/cli/index.js ${ms('cold.cli.spawn_to_ready_ms')}`,
    ...ratio('ratio.npm_start_vs_cli', 1.2, 'most'),
  ]);
  return rows;
}

/** Issue 42's figures: the start, the test kit, the request path, the refresh grant and memory that stays flat. */
function issue42Rows(): string[][] {
  const rows: string[][] = [['figure', 'same-run comparison', 'ratio', 'target', 'met']];
  rows.push([
    `tokenbell --memory --seed: spawn -> first 200 ${ms('cold.memory.spawn_to_first_200_ms')}`,
    `node-oidc-provider: spawn -> first 200 (discovery) ${ms('cold.peer.spawn_to_first_200_ms')}`,
    ...ratio('ratio.cold_memory_vs_peer', 1, 'most'),
  ]);
  rows.push([
    `startTokenbell() -> first token (signIn), fresh process, with the module's import ${fmt((figures['testing.first_token.tokenbell.import_ms'] ?? NaN) + (figures['testing.first_token.tokenbell.start_to_token_ms'] ?? NaN))} ms`,
    `oauth2-mock-server, the same ${fmt((figures['testing.first_token.mock.import_ms'] ?? NaN) + (figures['testing.first_token.mock.start_to_token_ms'] ?? NaN))} ms`,
    ...ratio('ratio.testing_first_token_with_import_vs_oauth2_mock_server', 1, 'most'),
  ]);
  rows.push([
    `  start -> token alone ${ms('testing.first_token.tokenbell.start_to_token_ms')}`,
    `oauth2-mock-server start() -> token ${ms('testing.first_token.mock.start_to_token_ms')}`,
    ...ratio('ratio.testing_first_token_vs_oauth2_mock_server', 1, 'most'),
  ]);
  rows.push([
    `test kit process RSS once started ${mib('testing.first_token.tokenbell.rss_after_start_mib')}`,
    `bare Express 5 once listening ${mib('testing.first_token.ceiling.rss_after_start_mib')}`,
    ...ratio('ratio.testing_rss_after_start_vs_bare_express', 1.3, 'most'),
  ]);
  for (const c of tokenConnectionCounts) {
    rows.push([`authenticated GET, ${c} conns ${rate(`read.reference.c${c}.rps`)}`, `bare Express 5 ${rate(`read.ceiling.c${c}.rps`)}`, ...ratio(`ratio.read_vs_ceiling.c${c}`, 0.85, 'least')]);
  }
  for (const c of tokenConnectionCounts) {
    rows.push([`introspection, JSON file, ${c} conns ${rate(`token.introspection.c${c}.file.rps`)}`, `bare Express form POST ${rate(`token.introspection.c${c}.ceiling.rps`)}`, ...ratio(`ratio.token.introspection.c${c}.file_vs_ceiling`, 0.85, 'least')]);
  }
  for (const c of tokenConnectionCounts) {
    rows.push([`refresh grant, durable JSON file, ${c} conns ${rate(`token.refresh_token.c${c}.file.rps`)}`, `node-oidc-provider ${rate(`token.refresh_token.c${c}.peer.rps`)}`, ...ratio(`ratio.token.refresh_token.c${c}.file_vs_peer`, 1, 'least')]);
  }
  rows.push([
    `soak RSS over the last minute (last 20 % if shorter), median, after ${fmt(figures['soak.seconds'])} s of mixed load (${fmt(figures['soak.requests'])} requests, ${fmt(figures['soak.failed'])} failed) ${mib('soak.rss_late_median_mib')}`,
    `over the first minute (first 20 %), median ${mib('soak.rss_early_median_mib')}; single readings ${mib('soak.rss_early_mib')} -> ${mib('soak.rss_end_mib')}`,
    `${fmt(figures['ratio.soak_rss_late_vs_early_median'], 3)}x`,
    '<= 1.1',
    met('ratio.soak_rss_late_vs_early_median', 1.1, 'most'),
  ]);
  const cycles = fmt(figures['testing.kit_memory.cycles']);
  const gc = figures['testing.kit_memory.gc_exposed'] === 1 ? ', after gc()' : '';
  for (const [label, key, growth] of [
    [`after ${cycles} startTokenbell()/close() cycles`, 'after_cycles_mib', 'growth_after_cycles_pct'],
    [`then after ${fmt(figures['testing.kit_memory.resets'])} reset()s`, 'after_resets_mib', 'growth_after_resets_pct'],
  ] as const) {
    rows.push([
      `test kit RSS ${label}${gc} ${mib(`testing.kit_memory.${key}`)}`,
      `after the first cycle ${mib('testing.kit_memory.after_first_mib')} (JS heap in use ${mib('testing.kit_memory.heap_after_first_mib')} -> ${mib(`testing.kit_memory.heap_${key}`)}, allocated ${mib('testing.kit_memory.heap_total_after_first_mib')} -> ${mib(`testing.kit_memory.heap_total_${key}`)})`,
      `${fmt(figures[`testing.kit_memory.${growth}`], 1)} % growth`,
      '<= 25 %',
      met(`testing.kit_memory.${growth}`, 25, 'most', 'points'),
    ]);
  }
  return rows;
}

/**
 * What bounds each issue-42 target this run missed, with this run's figures where the bench measures them; the CPU
 * profiles and module counts behind these lines are in issue 42's closing note.
 */
function issue42Bounds(): string[] {
  const missed = (key: string, target: number, at: 'most' | 'least') => met(key, target, at).startsWith('no');
  const us = (key: string) => `${fmt(figures[key])} µs`;
  const lines: string[] = [];
  if (missed('ratio.cold_memory_vs_peer', 1, 'most')) lines.push("start: loading modules (Express with body-parser and mime-db's JSON, the server's bundle) and the garbage collections during it");
  if (missed('ratio.testing_first_token_with_import_vs_oauth2_mock_server', 1, 'most')) {
    lines.push(`test kit's first token: its import, ${ms('testing.first_token.tokenbell.import_ms')} against oauth2-mock-server's ${ms('testing.first_token.mock.import_ms')} (Express, body-parser's iconv-lite, prom-client, the server's bundle); from start to token it takes ${times('ratio.testing_first_token_vs_oauth2_mock_server')} the mock's time`);
  }
  if (missed('ratio.testing_rss_after_start_vs_bare_express', 1.3, 'most')) lines.push(`test kit's RSS: Express alone takes a process to ${mib('testing.first_token.ceiling.rss_after_start_mib')}; the kit's modules and its instance add the rest`);
  if (tokenConnectionCounts.some((c) => missed(`ratio.read_vs_ceiling.c${c}`, 0.85, 'least'))) {
    lines.push(`authenticated GET: the server's CPU per request, ${us('read.reference.c10.cpu_us_per_request')} against bare Express's ${us('read.ceiling.c10.cpu_us_per_request')} at 10 conns: Node's HTTP work for 7 headers against 1, the request log's line, per-request garbage, validation and authentication`);
  }
  if (tokenConnectionCounts.some((c) => missed(`ratio.token.introspection.c${c}.file_vs_ceiling`, 0.85, 'least'))) lines.push("introspection: the GET's costs, with the form parser (qs) and client authentication");
  if (tokenConnectionCounts.some((c) => missed(`ratio.token.refresh_token.c${c}.file_vs_peer`, 1, 'least'))) {
    lines.push(`refresh grant: each rotation is a durable commit that waits for fdatasync (${fmt(figures['token.refresh_token.c10.file.commits_per_file_write'], 1)} rotations per file write at 10 conns), where node-oidc-provider keeps its tokens in memory`);
  }
  if (missed('ratio.soak_rss_late_vs_early_median', 1.1, 'most')) lines.push("soak: V8's old generation, which swings between major collections, and glibc keeping freed memory");
  if (['growth_after_cycles_pct', 'growth_after_resets_pct'].some((g) => missed(`testing.kit_memory.${g}`, 25, 'most'))) {
    lines.push(`test kit's growth: its JS heap in use goes from ${mib('testing.kit_memory.heap_after_first_mib')} to ${mib('testing.kit_memory.heap_after_cycles_mib')}; what grows is V8's young generation reaching its working size and glibc keeping freed memory (MALLOC_MMAP_THRESHOLD_, docs/running.md)`);
  }
  return lines.length ? ['', 'What bounds a missed target (this run)', ...lines.map((line) => `  ${line}`)] : [];
}
