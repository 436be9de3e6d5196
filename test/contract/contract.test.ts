// The contract suite: every case of cases.ts against the reference server, the Prism mock and the server behind
// Prism's validating proxy; then the coverage check over what the server target exercised. One file, so the
// coverage test really runs after the cases (vitest runs a file's tests in order, files in parallel).
//
// In the `postgres` test project (TOKENBELL_TEST_STORE=postgres) the reference server serves from a fresh PostgreSQL
// database, and only the server target runs: the mock has no store, the proxy target puts Prism's view of the same
// answers on top (the server target's --validate-responses checks each answer against the document already), and
// the coverage of the document and the figures in docs/contributing.md are the file store's run's to check.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTokenbellClient } from '../../packages/sdk/src/index.js';
import type { CoverageEntry, CoverageRecord } from '../../scripts/contract-coverage.js';
import { repoRoot } from '../../scripts/lib/paths.js';
import { cases, type ContractCase, type Instance } from './cases.js';
import { type CaseContext, type Exchange, mockSetup, recordingFetch, serverSetup, type SetupChannel, type TargetKind } from './context.js';
import { type ContractDocument, loadContractDocument } from './document.js';
import { casesNotApplicable, casesNotApplicableOnStore, notApplicableReason } from './not-applicable.js';
import { type ReferenceServer, type RunningProcess, startPrismMock, startPrismProxy, startReferenceServer, startupTimeoutMs } from './processes.js';
import { freshMigratedDatabase } from '../support/postgres.js';

const run = promisify(execFile);
/** The store under the suite's servers, as startTestServer reads it (packages/server/test/support/server.ts). */
const store: 'file' | 'postgres' = process.env.TOKENBELL_TEST_STORE === 'postgres' ? 'postgres' : 'file';
const kinds: TargetKind[] = store === 'postgres' ? ['server'] : ['server', 'mock', 'proxy'];
const labels: Record<TargetKind, string> = {
  server: 'the reference server',
  mock: 'the Prism mock',
  proxy: 'a second reference server behind prism proxy --errors',
};

interface RunningTarget {
  /** Where subject requests go; `invalid` takes the requests that break the document on purpose. */
  baseUrl: string;
  invalidBaseUrl: string;
  /** Where the cases that need a server of their own (ContractCase.instance) send their subject request. */
  instances: Record<Instance, string>;
  setup: SetupChannel;
  processes: RunningProcess[];
}

/**
 * The `restricted` instance (cases.ts, Instance): its monitoring allowlist leaves loopback, the suite's only address,
 * out, and it runs without test helpers.
 */
const restrictedOptions = { monitoringAllowlist: '192.0.2.0/24', testHelpers: false } as const;

let contract: ContractDocument;
const targets = {} as Record<TargetKind, RunningTarget>;
const started: RunningProcess[] = [];
const record: CoverageRecord = { targets: { server: { exercised: [], notApplicable: [] }, mock: { exercised: [], notApplicable: [] }, proxy: { exercised: [], notApplicable: [] } } };

beforeAll(async () => {
  if (store === 'postgres') return startOnPostgres();
  // All asked for at once (each starts when a core is free, processes.ts): Prism takes a few seconds to load the
  // document, the server a second or two for tsx.
  const pending = {
    server: startReferenceServer(),
    // Without --validate-responses: the server would turn a broken answer into a 500 before Prism could see it.
    upstream: startReferenceServer({ validateResponses: false }),
    mock: startPrismMock(),
    // The 404s of what an instance can leave out: a server whose monitoring allowlist leaves loopback (the suite's
    // only address) out and which runs without test helpers, played directly on the server target and through a
    // proxy of its own on the proxy target.
    restricted: startReferenceServer(restrictedOptions),
    // The `disposable` instance, a server like the suite's own, for the cases that reset an instance or move its
    // clock (which would take the suite's servers from under every later case), played the same way.
    disposable: startReferenceServer(),
    document: loadContractDocument(),
  };
  const [server, upstream, mock, restrictedServer, disposableServer] = await settle<[ReferenceServer, ReferenceServer, RunningProcess, ReferenceServer, ReferenceServer]>([
    pending.server,
    pending.upstream,
    pending.mock,
    pending.restricted,
    pending.disposable,
  ]);
  const [strict, lenient, restrictedProxy, disposableProxy] = await settle<[RunningProcess, RunningProcess, RunningProcess, RunningProcess]>([
    startPrismProxy(upstream.baseUrl),
    startPrismProxy(upstream.baseUrl, { validateRequest: false }),
    startPrismProxy(restrictedServer.baseUrl),
    startPrismProxy(disposableServer.baseUrl),
  ]);
  contract = await pending.document;
  targets.server = {
    baseUrl: server.baseUrl,
    invalidBaseUrl: server.baseUrl,
    instances: { restricted: restrictedServer.baseUrl, disposable: disposableServer.baseUrl },
    setup: serverSetup(server.baseUrl, server.storeUnwritable),
    processes: [server, restrictedServer, disposableServer],
  };
  // The mock keeps no state and knows no addresses: Prefer picks the answer whatever the instance.
  targets.mock = {
    baseUrl: mock.baseUrl,
    invalidBaseUrl: mock.baseUrl,
    instances: { restricted: mock.baseUrl, disposable: mock.baseUrl },
    setup: mockSetup(mock.baseUrl),
    processes: [mock],
  };
  // Setup for the proxy target goes to its server directly: Prism's proxy follows redirects, so signing in through
  // it would lose the session cookie, and only the subject request is what the proxy is there to judge.
  targets.proxy = {
    baseUrl: strict.baseUrl,
    invalidBaseUrl: lenient.baseUrl,
    instances: { restricted: restrictedProxy.baseUrl, disposable: disposableProxy.baseUrl },
    setup: serverSetup(upstream.baseUrl, upstream.storeUnwritable),
    processes: [strict, lenient, upstream, restrictedProxy, disposableProxy],
  };
  // Five targets, then the four proxies in front of them; on PostgreSQL three servers.
}, store === 'postgres' ? startupTimeoutMs(3) : startupTimeoutMs(5, 4));

// allSettled, not all: when one fails to start, the others are still tracked (and stopped by afterAll).
async function settle<T extends RunningProcess[]>(list: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const results = await Promise.allSettled(list);
  for (const r of results) if (r.status === 'fulfilled') started.push(r.value);
  const failed = results.filter((r) => r.status === 'rejected').map((r) => r.reason as unknown);
  if (failed.length === 1) throw failed[0];
  // Every one that did not start, not just the first: several at once point at the machine rather than a target.
  if (failed.length > 1) throw new Error(`${failed.length} targets did not start:\n\n${failed.map((e) => (e instanceof Error ? e.message : String(e))).join('\n\n')}`);
  return results.map((r) => (r as PromiseFulfilledResult<RunningProcess>).value) as T;
}

/** The server target alone, its servers each on a fresh database of the run's cluster, loaded from the same seed. */
async function startOnPostgres(): Promise<void> {
  const database = () => freshMigratedDatabase(inject('postgresUrl'));
  const document = loadContractDocument();
  const [server, restrictedServer, disposableServer] = await settle<[ReferenceServer, ReferenceServer, ReferenceServer]>([
    startReferenceServer({ database }),
    startReferenceServer({ database, ...restrictedOptions }),
    startReferenceServer({ database }),
  ]);
  contract = await document;
  targets.server = {
    baseUrl: server.baseUrl,
    invalidBaseUrl: server.baseUrl,
    instances: { restricted: restrictedServer.baseUrl, disposable: disposableServer.baseUrl },
    setup: serverSetup(server.baseUrl, server.storeUnwritable),
    processes: [server, restrictedServer, disposableServer],
  };
}

afterAll(async () => {
  await Promise.all(started.map((p) => p.stop()));
});

const report = (x: Exchange) =>
  [
    `${x.method} ${x.url.pathname}${x.url.search} → ${x.status} ${x.contentType}`,
    x.headers.get('sl-violations') ? `sl-violations: ${x.headers.get('sl-violations')}` : undefined,
    x.text.length > 1500 ? `${x.text.slice(0, 1500)}…` : x.text,
  ]
    .filter(Boolean)
    .join('\n');

async function runCase(c: ContractCase, kind: TargetKind): Promise<void> {
  const target = targets[kind];
  const baseUrl = c.invalidRequest ? target.invalidBaseUrl : c.instance ? target.instances[c.instance] : target.baseUrl;
  const exchanges: Exchange[] = [];
  const prefer = kind === 'mock' ? `code=${c.status}${c.mockExample ? `, example=${c.mockExample}` : ''}` : undefined;
  const subjectFetch = recordingFetch((x) => exchanges.push(x), prefer);
  const ctx: CaseContext = {
    target: kind,
    store,
    baseUrl,
    fetch: subjectFetch,
    client: (auth = null) => createTokenbellClient({ baseUrl, fetch: subjectFetch, auth }),
    setup: target.setup,
  };
  // The document check comes first even when the case's own assertions failed: Prism's report and the schema
  // errors say more than "expected an OAuthError".
  let failure: unknown;
  const result = await c.call(ctx).catch((e: unknown) => {
    failure = e;
  });
  if (exchanges.length !== 1) {
    throw new Error(`the case must make exactly one subject request, it made ${exchanges.length}`, { cause: failure });
  }
  const x = exchanges[0]!;
  // Everything wrong with the answer in one message: the status, our own check against the document, Prism's.
  const findings: string[] = [];
  if (x.status !== c.status) findings.push(`status ${x.status}, the case expects ${c.status}`);
  findings.push(...contract.problems(c.operation, x).map((p) => `document: ${p}`));
  const violations = x.headers.get('sl-violations');
  if (kind === 'mock' && c.invalidRequest) {
    if (violations === null) findings.push(`Prism: no violation reported, but the request is meant to break the document (${c.invalidRequest})`);
  } else if (kind !== 'server' && violations !== null) {
    findings.push(`Prism: ${violations}`);
  }
  expect(findings, report(x)).toEqual([]);
  if (failure !== undefined) throw failure;
  c.expect?.(x, ctx);
  if (kind !== 'mock') await c.behaviour?.(x, ctx, result);
  record.targets[kind].exercised.push({ operationId: c.operation, status: x.status, case: c.name });
}

/** The cases that must pass on `kind`, each of them recorded as exercised. */
const passing = (kind: TargetKind) => cases.filter((c) => notApplicableReason(kind, store, c) === undefined);

for (const kind of kinds) {
  describe(`contract against ${labels[kind]}`, () => {
    for (const c of cases) {
      const title = `${c.operation} ${c.status}: ${c.name}`;
      const reason = notApplicableReason(kind, store, c);
      if (reason) {
        record.targets[kind].notApplicable.push({ operationId: c.operation, status: c.status, case: c.name, reason });
        it.skip(`${title} — not applicable: ${reason}`, () => undefined);
        continue;
      }
      it(title, () => runCase(c, kind));
    }
  });
}

// On PostgreSQL, what the coverage check's last step asks of the server target: every case passed.
if (store === 'postgres') {
  describe('contract on PostgreSQL', () => {
    it('passed every case that applies to the server target', () => {
      expect(record.targets.server.exercised).toHaveLength(passing('server').length);
    });
  });
}

if (store === 'file') describe('contract coverage', () => {
  const coverage = (file: string) =>
    run(process.execPath, ['--import', 'tsx', join(repoRoot, 'scripts/contract-coverage.ts'), file], { cwd: repoRoot }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );

  it('lists no exception for a case that does not exist', () => {
    const names = new Set(cases.map((c) => c.name));
    expect([...Object.keys(casesNotApplicable), ...Object.keys(casesNotApplicableOnStore)].filter((name) => !names.has(name))).toEqual([]);
  });

  it('exercises every declared answer of the document on every target, or lists why not', async () => {
    const file = join(repoRoot, '.tmp/contract-coverage.json');
    await mkdir(join(repoRoot, '.tmp'), { recursive: true });
    await writeFile(file, `${JSON.stringify(record, null, 2)}\n`);
    const result = await coverage(file);
    console.log(result.stdout);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    // docs/contributing.md (Tests) states the three figures; they must be today's.
    const figure = (target: string) => {
      const match = new RegExp(`^${target} +declared answers exercised (\\d+)/(\\d+) \\(\\d+%\\), not applicable (\\d+)$`, 'm').exec(result.stdout);
      if (!match) throw new Error(`no ${target} figure in:\n${result.stdout}`);
      return match.slice(1).map(Number) as [number, number, number];
    };
    const [server, declared, serverListed] = figure('server');
    const [mock, , mockListed] = figure('mock');
    const [proxy, , proxyListed] = figure('proxy');
    const guide = (await readFile(join(repoRoot, 'docs', 'contributing.md'), 'utf8')).replace(/\s+/g, ' ');
    const stated = /Today, of (\d+) declared answers: the server (\d+) \((\d+) listed.*?the mock (\d+) \((\d+) listed.*?the proxy (\d+) \((\d+) listed/.exec(guide)?.slice(1).map(Number);
    expect(stated, "the coverage sentence of docs/contributing.md").toEqual([declared, server, serverListed, mock, mockListed, proxy, proxyListed]);
    // Every case has to have passed for the record to be the suite's, not the part of it that happened to work.
    for (const kind of kinds) expect(record.targets[kind].exercised, kind).toHaveLength(passing(kind).length);
  });

  it('fails when an answer listed as not applicable was exercised after all', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tokenbell-coverage-'));
    try {
      const stale: CoverageRecord = structuredClone(record);
      stale.targets.proxy.exercised.push({ operationId: 'signOut', status: 302, case: 'a proxy that stopped following redirects' });
      await writeFile(join(dir, 'record.json'), JSON.stringify(stale));
      const result = await coverage(join(dir, 'record.json'));
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('proxy: signOut 302 (POST /users/sign_out) is exercised, but not-applicable.ts says it cannot be');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('fails when a declared answer is neither exercised nor listed as not applicable', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tokenbell-coverage-'));
    try {
      const partial: CoverageRecord = structuredClone(record);
      const dropped = (e: CoverageEntry) => e.operationId !== 'revokePersonalAccessToken';
      partial.targets.server.exercised = partial.targets.server.exercised.filter(dropped);
      await writeFile(join(dir, 'record.json'), JSON.stringify(partial));
      const result = await coverage(join(dir, 'record.json'));
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('server: revokePersonalAccessToken 302 (POST /profile/personal_access_tokens/{token_id}/revoke)');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

