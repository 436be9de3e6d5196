// Operating the server, after the service's own conventions: /-/health, /-/liveness, /-/readiness and Prometheus
// metrics at /-/metrics, answered only to the addresses the operator allows (--monitoring-allowlist, loopback by
// default, as the service's monitoring whitelist); anyone else gets a 404, as if they did not exist. The request log
// is request-log.ts.
import type { Request, RequestHandler, Response } from 'express';
import { Router } from 'express';
// prom-client's parts alone, not its index (src/prom-client-parts.d.ts says why); the runtime's collectors at a scrape.
// The types are the package's own, so that the declarations this module ships name nothing but prom-client.
import type { Counter, Histogram, Metric, OpenMetricsContentType, Registry } from 'prom-client';
import CounterClass from 'prom-client/lib/counter.js';
import Gauge from 'prom-client/lib/gauge.js';
import HistogramClass from 'prom-client/lib/histogram.js';
import RegistryClass from 'prom-client/lib/registry.js';
import proxyAddr from 'proxy-addr';
import { limits } from '../config.js';
import { routeOf } from './dispatch.js';
import type { DeliveryOutcome, MailDelivery } from '../domain/mail-delivery.js';
import type { MailStorage, MaintenanceStorage, OutboxSummary } from '../domain/storage/index.js';
import { version } from '../version.js';
import { HttpError } from './errors.js';

export interface MetricsOptions {
  maintenance: MaintenanceStorage;
  mail: MailStorage;
  /** The clock the mail delivery worker keeps, in epoch seconds: the oldest queued message's age is by it. */
  now: () => number;
  /** The delivery worker whose attempts are counted; none in most tests. */
  mailDelivery?: Pick<MailDelivery, 'observeAttempts'>;
  testHelpers: boolean;
}

/**
 * The Node.js runtime's metrics (CPU, memory, event loop lag, GC), once per process: they are the process's, whatever
 * servers it runs, and prom-client's collector starts a GC observer and an event-loop monitor that it never stops,
 * so one per server would outlive every server a test suite starts and closes.
 */
let processRegistry: Promise<Registry> | undefined;
function processMetrics(): Promise<Registry> {
  processRegistry ??= import('prom-client/lib/defaultMetrics.js').then(({ default: collectDefaultMetrics }) => {
    const registry = new RegistryClass();
    collectDefaultMetrics({ register: registry });
    return registry;
  });
  return processRegistry;
}

/** The server's metrics, in a registry of its own, so that several servers in one process do not mix theirs. */
export class Metrics {
  readonly registry: Registry = new RegistryClass();
  readonly requests: Counter<'method' | 'route' | 'status'> = new CounterClass({
    name: 'tokenbell_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['method', 'route', 'status'],
    registers: [this.registry],
    collect: () => {
      this.requests.reset();
      for (const series of this.#allSeries()) {
        for (const [status, answered] of series.statuses) this.requests.inc({ method: series.method, route: series.route, status: String(status) }, answered);
      }
    },
  });
  readonly latency: Histogram<'method' | 'route'> = new HistogramClass({
    name: 'tokenbell_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by route',
    labelNames: ['method', 'route'],
    buckets: latencyBuckets,
    registers: [this.registry],
    collect: () => {
      // prom-client's own form of a histogram's series (histogram.js: labels, bucketValues by bound, sum, count),
      // which it makes cumulative as it writes them: a histogram has no public way to be given counts.
      const hashMap: Record<string, object> = {};
      for (const series of this.#allSeries()) {
        const bucketValues = Object.fromEntries(latencyBuckets.map((bound, i) => [bound, series.buckets[i]!]));
        hashMap[`${series.method} ${series.route}`] = { labels: { method: series.method, route: series.route }, bucketValues, sum: series.sum, count: series.answered };
      }
      (this.latency as unknown as { hashMap: Record<string, object> }).hashMap = hashMap;
    },
  });
  readonly grants: Counter<'grant_type'> = new CounterClass({ name: 'tokenbell_token_grants_total', help: 'Tokens issued, by grant type', labelNames: ['grant_type'], registers: [this.registry] });
  readonly throttled: Counter = new CounterClass({ name: 'tokenbell_login_throttle_refusals_total', help: 'Password and code checks refused by the brute-force limits', registers: [this.registry] });
  readonly storeWrites: Histogram = new HistogramClass({
    name: 'tokenbell_store_commit_duration_seconds',
    help: 'Time from a change to its durable write',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
    registers: [this.registry],
  });

  readonly deliveryAttempts: Counter<'outcome'> = new CounterClass({
    name: 'tokenbell_mail_delivery_attempts_total',
    help: 'Attempts to deliver notification mail by this instance, by outcome (sent, retry: queued again for later, failed: given up)',
    labelNames: ['outcome'],
    registers: [this.registry],
  });

  constructor({ maintenance, mail, now, mailDelivery, testHelpers }: MetricsOptions) {
    const metrics = this;
    this.#answered = function answered(this: ObservedResponse) {
      metrics.#observe(this);
    };
    maintenance.observeWrites((seconds) => this.storeWrites.observe(seconds));
    // Every outcome from the start, at 0: a rate over a series that appears only at its first failure misses it.
    for (const outcome of ['sent', 'retry', 'failed'] satisfies DeliveryOutcome[]) this.deliveryAttempts.labels(outcome).inc(0);
    mailDelivery?.observeAttempts((outcome) => this.deliveryAttempts.labels(outcome).inc());
    // The pool first: the registry collects in this order, and pg counts a query handed an idle connection on the next
    // tick, as the outbox's is, among those waiting until then.
    if (maintenance.poolUsage() !== null) this.#poolGauges(maintenance);
    this.#outboxGauges(mail, now);
    new Gauge({ name: 'tokenbell_build_info', help: 'The server version and the Node.js version it runs on, as labels; always 1', labelNames: ['version', 'node_version'], registers: [this.registry] })
      .labels(version, process.versions.node)
      .set(1);
    new Gauge({ name: 'tokenbell_test_helpers_enabled', help: 'Whether the test-helper area (--test-helpers), never meant for production, is on: 1 or 0', registers: [this.registry] }).set(testHelpers ? 1 : 0);
  }

  /** The outbox as the store has it at each scrape: on a database, the outbox every instance shares. */
  #outboxGauges(mail: MailStorage, now: () => number): void {
    // One question to the store per scrape, shared by both gauges (the registry collects them at once).
    let asking: Promise<OutboxSummary | null> | undefined;
    const summary = () =>
      (asking ??= mail
        .summary()
        // A store that cannot answer costs these gauges, not the whole scrape: the other metrics matter most then.
        .catch(() => null)
        .finally(() => {
          asking = undefined;
        }));
    const messages = new Gauge({
      name: 'tokenbell_mail_outbox_messages',
      help: 'Notification mail in the outbox, by status (sent and failed ones until pruned); absent when the store cannot be asked',
      labelNames: ['status'],
      registers: [this.registry],
      async collect() {
        const found = await summary();
        messages.reset();
        if (found) for (const status of ['queued', 'sent', 'failed'] as const) messages.labels(status).set(found[status]);
      },
    });
    const oldest = new Gauge({
      name: 'tokenbell_mail_outbox_oldest_queued_age_seconds',
      help: 'How long the oldest queued notification mail has waited, in seconds; 0 when none waits, NaN when the store cannot be asked',
      registers: [this.registry],
      async collect() {
        const found = await summary();
        oldest.set(found === null ? Number.NaN : found.oldestQueuedAt === null ? 0 : Math.max(0, now() - found.oldestQueuedAt));
      },
    });
  }

  #poolGauges(maintenance: MaintenanceStorage): void {
    const connections = new Gauge({
      name: 'tokenbell_database_pool_connections',
      help: 'Connections of the PostgreSQL pool, by state (in_use, idle)',
      labelNames: ['state'],
      registers: [this.registry],
      collect() {
        const usage = maintenance.poolUsage();
        if (usage === null) return;
        connections.labels('in_use').set(usage.inUse);
        connections.labels('idle').set(usage.idle);
      },
    });
    const waiting = new Gauge({
      name: 'tokenbell_database_pool_waiting',
      help: 'Callers waiting for a connection of the PostgreSQL pool, every one being in use',
      registers: [this.registry],
      collect() {
        waiting.set(maintenance.poolUsage()?.waiting ?? 0);
      },
    });
  }

  /**
   * The same metrics in OpenMetrics, written by a registry of stand-ins made for this scrape. Writing OpenMetrics,
   * prom-client renames each counter on the metric itself (it drops `_total` from its name, for good), so the one
   * registry cannot write both formats; nor can it switch formats, with scrapes of both kinds under way at once.
   */
  async openMetrics(): Promise<string> {
    const registry = new RegistryClass<OpenMetricsContentType>();
    registry.setContentType(RegistryClass.OPENMETRICS_CONTENT_TYPE);
    const all = [...this.registry.getMetricsAsArray(), ...(await processMetrics()).getMetricsAsArray()];
    for (const metric of all as unknown as Array<{ name: string; help: string; type: string; get(): Promise<object> }>) {
      // Named as prom-client renames the stand-in, not the metric.
      const standIn = { name: metric.name, help: metric.help, type: metric.type, get: async () => ({ ...(await metric.get()), name: standIn.name }) };
      registry.registerMetric(standIn as unknown as Metric);
    }
    return registry.metrics();
  }

  /** The Prometheus text: this server's metrics and the process's. */
  async prometheus(): Promise<string> {
    return RegistryClass.merge([this.registry, await processMetrics()]).metrics();
  }

  /** Counts every request once answered, by the route that matched (a bounded set) rather than its raw path. */
  readonly observeRequests: RequestHandler = (req, res, next) => {
    const observed = res as ObservedResponse;
    observed[startedAt] = performance.now();
    // As sent: a HEAD is answered as a GET from here on (app.ts).
    observed[sentMethod] = req.method;
    // One listener shared by every request, not a closure each: it finds the request's state on the answer.
    res.on('finish', this.#answered);
    next();
  };

  readonly #answered: (this: ObservedResponse) => void;

  // Each request's series, found through maps keyed by the strings the request already has (the route is the route
  // table's own string): no label object, key or closure is made per request. prom-client's labelled children would
  // build the label object and its hash key on every inc() and observe(); the counts are handed to prom-client's
  // metrics at each scrape instead (their collect()), as the same series.
  readonly #series = new Map<string, Map<string, RouteSeries>>();

  *#allSeries(): Iterable<RouteSeries> {
    for (const byMethod of this.#series.values()) yield* byMethod.values();
  }

  #observe(res: ObservedResponse): void {
    const method = res[sentMethod]!;
    const route = routeOf(res.req) ?? 'unmatched';
    let byMethod = this.#series.get(route);
    if (!byMethod) this.#series.set(route, (byMethod = new Map()));
    let series = byMethod.get(method);
    if (!series) byMethod.set(method, (series = new RouteSeries(method, route, latencyBuckets.length)));
    series.count(res.statusCode, (performance.now() - res[startedAt]!) / 1000);
  }
}

/** What observeRequests keeps on each answer until it is counted. */
const startedAt = Symbol('observed since');
const sentMethod = Symbol('method as sent');
type ObservedResponse = Response & { [startedAt]?: number; [sentMethod]?: string };

const latencyBuckets = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** The requests of one method and route: answers by status, and the latency histogram's buckets, sum and count. */
class RouteSeries {
  readonly statuses = new Map<number, number>();
  /** Answers at or under each bound, the bound's own bucket only (prom-client's bucketValues, not yet cumulative). */
  readonly buckets: Float64Array;
  sum = 0;
  answered = 0;
  constructor(
    readonly method: string,
    readonly route: string,
    bounds: number,
  ) {
    this.buckets = new Float64Array(bounds);
  }

  count(status: number, seconds: number): void {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
    this.sum += seconds;
    this.answered++;
    for (let i = 0; i < latencyBuckets.length; i++) {
      if (seconds <= latencyBuckets[i]!) {
        this.buckets[i] = this.buckets[i]! + 1;
        break;
      }
    }
  }
}

type Readiness = Awaited<ReturnType<MaintenanceStorage['readiness']>>;

/**
 * The store's readiness within limits.readinessTimeoutMs, else not ready: a stalled database would otherwise hold
 * the answer for --database-timeout, past a probe's own timeout. One question to the store at a time: while one is
 * unanswered, later probes wait for it (or the limit) instead of queueing more for the pool.
 */
function readinessProbe(maintenance: MaintenanceStorage): () => Promise<Readiness> {
  let asking: Promise<Readiness> | undefined;
  return async () => {
    asking ??= maintenance.readiness().finally(() => {
      asking = undefined;
    });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<Readiness>((resolve) => {
      timer = setTimeout(() => resolve({ ready: false, problem: `the store did not answer within ${limits.readinessTimeoutMs} ms` }), limits.readinessTimeoutMs);
    });
    try {
      return await Promise.race([asking, late]);
    } finally {
      clearTimeout(timer);
    }
  };
}

/** The monitoring addresses as `trust proxy` spells them (`loopback`, `10.0.0.0/8`, ...): who may ask /-/*. */
export function operationsRouter({ maintenance, metrics, allowlist, stopping, testHelpers }: { maintenance: MaintenanceStorage; metrics: Metrics; allowlist: string[]; stopping?: AbortSignal; testHelpers: boolean }): Router {
  const allowed = proxyAddr.compile(allowlist);
  const router = Router();
  router.use('/-', (req, _res, next) => {
    // The client as `trust proxy` (--trust-proxy) finds it: the TCP peer unless the peer is a trusted proxy, then the
    // address that proxy reports. Behind a proxy on loopback the peer is always allowed, whoever the client is; a
    // client's own X-Forwarded-For still names nobody, since only a trusted proxy's is read.
    if (!allowed(req.ip ?? '', 0)) throw new HttpError(404, '404 Not Found');
    next();
  });
  router.get('/-/health', (_req, res) => {
    res.type('text/plain').send('tokenbell OK');
  });
  router.get('/-/liveness', (_req, res) => {
    res.json({ status: 'ok' });
  });
  const probe = readinessProbe(maintenance);
  router.get('/-/readiness', async (_req, res) => {
    // A stopping server still finishes its requests, but a load balancer should send it no more.
    const { ready, problem } = stopping?.aborted ? { ready: false, problem: 'the server is shutting down; its store closes once the requests in flight finish' } : await probe();
    const check = ready ? { status: 'ok' } : { status: 'failed', message: problem };
    // Not ready is the probe doing its job, not a failure of this request: the request log warns (not errors) with why.
    if (!ready) res.locals.notReady = problem;
    res.status(ready ? 200 : 503).json({ status: ready ? 'ok' : 'failed', store_check: [check], test_helpers: testHelpers });
  });
  router.get('/-/metrics', async (req, res) => {
    const openMetrics = asksOpenMetrics(req);
    const text = openMetrics ? await metrics.openMetrics() : await metrics.prometheus();
    res.vary('Accept');
    // Exactly as prom-client names the format: res.type() and send() of a string would rewrite it (charset first).
    res.setHeader('Content-Type', openMetrics ? RegistryClass.OPENMETRICS_CONTENT_TYPE : metrics.registry.contentType);
    res.send(Buffer.from(text));
  });
  return router;
}

const formats = /^(text\/plain|application\/openmetrics-text)\s*(;|$)/i;

/**
 * Whether the client prefers OpenMetrics to the Prometheus text, as Express weighs its Accept. Each format answers to
 * its media type with any parameters (a version, a charset: Prometheus asks `version=1.0.0`, then the draft `0.0.1`):
 * offered under each range that names it, parameters and all, since a range with parameters matches only an offer
 * with the same. Whoever asks for neither gets the Prometheus text, as before there was a choice.
 */
function asksOpenMetrics(req: Request): boolean {
  const ranges = (req.get('accept') ?? '').split(',').map((range) =>
    range
      .split(';')
      .filter((param) => !/^\s*q\s*=/i.test(param))
      .join(';')
      .trim(),
  );
  const chosen = req.accepts(['text/plain', 'application/openmetrics-text', ...ranges.filter((range) => formats.test(range))]);
  return typeof chosen === 'string' && chosen.toLowerCase().startsWith('application/openmetrics-text');
}
