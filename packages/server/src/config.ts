// Settings come from flags, then the environment, then defaults; see the configuration table in docs/running.md.
import { BlockList, isIP } from 'node:net';
import express from 'express';
import { parseFlags } from './flags.js';
import { type PasswordGrantSetting, passwordGrantSettings } from './domain/oauth/grants.js';
import { ConfigError } from './explained-error.js';

// Defined with the other explained errors, so that the commands' parser (cli/args.ts) needs nothing from here; the
// settings' callers still take it from here, with the settings it guards.
export { ConfigError };

export interface Config {
  port: number;
  host: string;
  /** The JSON data file, or null for an in-memory store (tests); unused with a database. */
  dataFile: string | null;
  /** A PostgreSQL database instead of the data file, for several instances sharing one state. */
  databaseUrl: string | null;
  /** Connections this instance keeps to the database at most. */
  databasePoolSize: number;
  /** Seconds a database connection, statement or wait for a free connection may take before the request fails. */
  databaseTimeout: number;
  /** Bring the database schema up to date at start-up (as `tokenbell migrate` does). */
  migrate: boolean;
  /** Access token lifetime in seconds (expires_in). */
  tokenTtl: number;
  /** Authorization code lifetime in seconds. */
  codeTtl: number;
  /** OpenID Connect id_token lifetime in seconds (`exp` - `iat`); at most a day, the time a retired key stays published. */
  idTokenTtl: number;
  /** Public base URL of the instance: the issuer and the origin of every absolute URL the server prints. */
  baseUrl: string;
  seedFile: string | null;
  /** Validate every response against the document too (on in tests; costs throughput). */
  validateResponses: boolean;
  /** Largest accepted request body, as body-parser reads it. */
  bodyLimit: string;
  /** Set the Secure flag on the session cookie (when the base URL is https). */
  secureCookies: boolean;
  /**
   * Express's `trust proxy`: which proxies in front may say, in X-Forwarded-*, who the client is and whether it
   * came over https. Off by default, so a client cannot pick its own address for the sign-in throttle.
   */
  trustProxy: boolean | number | string;
  /** App IDs of resource servers that may introspect every token; other clients only their own (RFC 7662 section 4). */
  introspectionClients: string[];
  /** Who may use the password grant: anyone (`any`, the spec), authenticated clients only (`clients`), or nobody. */
  passwordGrant: PasswordGrantSetting;
  /** Seconds after sign-in at which a browser session ends, however active (the idle timeout is in `limits`). */
  sessionLifetime: number;
  /** Who may read /-/health, /-/readiness, /-/liveness and /-/metrics: addresses and subnets as `trust proxy` takes them. */
  monitoringAllowlist: string[];
  /** How much the request log says (pino's levels). */
  logLevel: LogLevel;
  /** How log lines are written: pino's JSON, JSON with level names and ISO times, or readable lines for a person. */
  logFormat: LogFormat;
  /** Serve the test-helper area of the API (events in, mail listed); off in production. */
  testHelpers: boolean;
  /** The administrator's personal access token for the test-helper area, given rather than made and printed at start. */
  testHelpersToken: string | null;
  /** Give an empty store the demo account, group, project and application, and their credentials on standard error. */
  demo: boolean;
  /** Where notification mail goes (nodemailer's SMTP URL), or null to write one log line per message instead. */
  smtpUrl: string | null;
  /** The From address of notification mail. */
  mailFrom: string;
  /** Seconds that requests in flight at SIGTERM or SIGINT get to finish before their connections are cut. */
  shutdownTimeout: number;
  /** The service's release the version and metadata calls answer as (clients compare it to enable features). */
  gitlabVersion: string;
}

export const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof logLevels)[number];
export const logFormats = ['json', 'json-iso', 'pretty'] as const;
export type LogFormat = (typeof logFormats)[number];

/**
 * Every setting an operator can change, once: its flag, its environment variable, its default and what it means.
 * `configFrom` reads them, `usage` (--help) prints them, and a test holds the configuration table of docs/running.md to them.
 */
export const settings = [
  { flag: 'port', arg: 'N', env: 'PORT', default: '3000', help: 'port to listen on' },
  { flag: 'host', arg: 'H', env: 'TOKENBELL_HOST', default: '127.0.0.1', help: 'address to listen on' },
  { flag: 'data', arg: 'FILE', env: 'TOKENBELL_DATA', default: './data/tokenbell.json', help: 'JSON data file (--memory for none)' },
  { flag: 'memory', env: undefined, default: 'off', help: 'keep data in memory only (not with --data)' },
  { flag: 'database-url', arg: 'URL', env: 'DATABASE_URL', default: 'none', help: 'keep data in PostgreSQL instead of the data file, shared by every instance on it (postgres://USER:PASSWORD@HOST:PORT/DB; TLS options in the URL)' },
  { flag: 'database-pool-size', arg: 'N', env: 'TOKENBELL_DATABASE_POOL_SIZE', default: '10', help: 'connections to the database this instance keeps at most' },
  { flag: 'database-timeout', arg: 'SECONDS', env: 'TOKENBELL_DATABASE_TIMEOUT', default: '5', help: 'longest wait for the database (a connection, a free one in the pool, a statement) before a request answers 503' },
  { flag: 'migrate', env: 'TOKENBELL_MIGRATE', default: 'off', help: 'bring the database schema up to date before serving (1/true/yes/on to turn on), as tokenbell migrate does' },
  { flag: 'token-ttl', arg: 'N', env: 'TOKENBELL_TOKEN_TTL', default: '7200', help: 'access token lifetime (expires_in), seconds' },
  { flag: 'id-token-ttl', arg: 'N', env: 'TOKENBELL_ID_TOKEN_TTL', default: '120', help: 'OpenID Connect id_token lifetime, seconds (at most 86400)' },
  { flag: 'base-url', arg: 'URL', env: 'TOKENBELL_BASE_URL', default: 'http://HOST:PORT', help: 'public base URL: the issuer and every absolute link' },
  { flag: 'seed', arg: 'FILE', env: 'TOKENBELL_SEED', default: 'none', help: 'load users, groups, projects and applications from a JSON fixture' },
  { flag: 'validate-responses', env: 'TOKENBELL_VALIDATE_RESPONSES', default: 'off', help: 'validate every response against the OpenAPI document (1/true/yes/on to turn on)' },
  { flag: 'trust-proxy', arg: 'VALUE', env: 'TOKENBELL_TRUST_PROXY', default: 'false', help: 'proxies trusted for X-Forwarded-For/-Proto: a hop count, addresses or subnets (loopback, 10.0.0.0/8), true' },
  { flag: 'introspection-clients', arg: 'IDS', env: 'TOKENBELL_INTROSPECTION_CLIENTS', default: 'none', help: 'App IDs (comma-separated) of resource servers that may introspect every token' },
  { flag: 'password-grant', arg: 'any|clients|off', env: 'TOKENBELL_PASSWORD_GRANT', default: 'any', help: 'who may use the password grant: anyone (the spec), authenticated clients, nobody' },
  { flag: 'session-lifetime', arg: 'N', env: 'TOKENBELL_SESSION_LIFETIME', default: '86400', help: 'seconds after sign-in at which a browser session ends, however active' },
  { flag: 'monitoring-allowlist', arg: 'ADDRESSES', env: 'TOKENBELL_MONITORING_ALLOWLIST', default: 'loopback', help: 'addresses and subnets (comma-separated) that may read /-/health, /-/readiness, /-/liveness and /-/metrics' },
  { flag: 'log-level', arg: 'LEVEL', env: 'TOKENBELL_LOG_LEVEL', default: 'info', help: 'request log level: fatal, error, warn, info, debug, trace or silent' },
  { flag: 'log-format', arg: 'FORMAT', env: 'TOKENBELL_LOG_FORMAT', default: 'auto', help: 'json (pino\'s: numeric levels, epoch milliseconds), json-iso (level names, ISO 8601 times) or pretty (readable lines); auto is pretty when standard output is a terminal, else json' },
  { flag: 'smtp-url', arg: 'URL', env: 'TOKENBELL_SMTP_URL', default: 'none', help: 'send notification mail through this SMTP server (smtp://USER:PASSWORD@HOST:PORT, smtps:// for TLS); without it, each message is a log line' },
  { flag: 'mail-from', arg: 'ADDRESS', env: 'TOKENBELL_MAIL_FROM', default: 'tokenbell <notifications@HOST>', help: 'the From address of notification mail (HOST: the base URL\'s host name)' },
  { flag: 'gitlab-version', arg: 'VERSION', env: 'TOKENBELL_GITLAB_VERSION', default: '17.11.0', help: 'the GitLab release that /api/v4/version and /api/v4/metadata answer as (MAJOR.MINOR.PATCH, with an optional suffix such as -ee), for clients that check it' },
  { flag: 'shutdown-timeout', arg: 'SECONDS', env: 'TOKENBELL_SHUTDOWN_TIMEOUT', default: '10', help: 'on SIGTERM or SIGINT, how long requests in flight may take to finish before their connections are cut' },
  { flag: 'test-helpers', env: 'TOKENBELL_TEST_HELPERS', default: 'off', help: 'serve the test-helper API for administrators (shape state, mint tokens, move the clock, reset, the request journal, faults, notification events and mail); never in production (1/true/yes/on to turn on); refused on a --host other than loopback, a --base-url not http on loopback, or with --trust-proxy, without the next setting' },
  { flag: 'test-helpers-on-public-host', env: 'TOKENBELL_TEST_HELPERS_ON_PUBLIC_HOST', default: 'off', help: 'allow --test-helpers where others can reach it (a --host other than loopback, a --base-url not http on loopback, --trust-proxy), for a shared test environment (1/true/yes/on to turn on)' },
  { flag: 'test-helpers-token', arg: 'TOKEN', env: 'TOKENBELL_TEST_HELPERS_TOKEN', default: 'none', help: 'with --test-helpers: the personal access token (20 to 255 printable characters) of the administrator root (made when absent) for the test-helper area, kept across restarts; without it, a new one is written to standard error at start' },
  { flag: 'demo', env: 'TOKENBELL_DEMO', default: 'auto', help: 'on an empty store, create a demo account, group, project and application and write their credentials to standard error (1/true/yes/on, 0/false/no/off); auto is on for the data file or memory when standard output is a terminal (npm start turns it on)' },
] as const satisfies readonly { flag: string; arg?: string; env: string | undefined; default: string; help: string }[];

type Flag = (typeof settings)[number]['flag'];

/** A setting's default as the table states it. */
export const defaultOf = (flag: Flag): string => settings.find((s) => s.flag === flag)!.default;

/**
 * The limits that are not settings, each named once with its reason. The code uses these; docs/running.md and docs/security.md say them.
 */
export const limits = {
  /** Authorization codes live 10 minutes, the most RFC 6749 section 4.1.2 recommends, and are single-use. */
  codeTtlSeconds: 600,
  /** Largest request body, as body-parser reads it: far above any form or setting, far below a memory problem. */
  bodyLimit: '100kb',
  /** A browser session that made no request for this long has ended (a working day). */
  sessionIdleSeconds: 8 * 60 * 60,
  /** How long the code step of a two-factor sign-in waits after the right password. */
  twoFactorStepSeconds: 5 * 60,
  /** How often the server drops expired codes, tokens and sessions from the store. */
  pruneIntervalSeconds: 60 * 60,
  /**
   * How long an expired or revoked code or token stays before pruning drops it: while its record is there, a late
   * use is answered as expired or revoked rather than unknown, and a replayed code or rotated refresh token is still
   * recognised and ends its chain (RFC 6749 section 4.1.2, RFC 9700 section 4.14.2). Sessions have no grace.
   */
  pruneGraceSeconds: 24 * 60 * 60,
  /**
   * The Retry-After of a 503 answered while the store cannot be reached: about one --database-timeout (its default),
   * the time a stalled database is given before a request gives up, so retries do not pile onto an outage.
   */
  storeRetryAfterSeconds: 5,
  /**
   * How long /-/readiness waits for the store's answer before it answers 503 itself: under Kubernetes' default
   * readiness timeout (1 s), so a stalled database shows as not ready rather than as a probe that timed out. API
   * requests keep --database-timeout; one probe at a time goes on in the background until the store answers.
   */
  readinessTimeoutMs: 800,
  /** Sent and failed notification mail stays this long (the mail page and the test helpers list it), then goes. */
  mailRetentionSeconds: 7 * 24 * 60 * 60,
  /** The journal is folded into the data file once it is this large and larger than the file. */
  minCompactionBytes: 4 * 2 ** 20,
  /**
   * Device authorizations (RFC 8628 section 3.2), as the service answers them: the codes live 5 minutes, and a
   * device polls the token endpoint at most every 5 seconds.
   */
  deviceAuthorization: {
    expiresInSeconds: 300,
    intervalSeconds: 5,
    /** One client's device authorizations waiting at once; more is a flood, not people (each waits 5 minutes at most). */
    pendingPerClient: 100,
  },
  /** Failed password checks (docs/security.md, "Brute-force protection"). */
  loginThrottle: {
    perAddress: { failures: 30, windowSeconds: 10 * 60 },
    perLogin: { failures: 10, windowSeconds: 10 * 60 },
    /** Device authorizations asked for from one address, answered or not (docs/security.md). */
    deviceStartsPerAddress: { requests: 60, windowSeconds: 60 },
    knownAddressSeconds: 30 * 24 * 60 * 60,
    /** Keys each count keeps in memory, at most (docs/security.md). */
    countedKeys: 100_000,
  },
} as const;

/** A value and what to blame for it in a message: the flag, or the environment variable it came from. */
interface Given {
  value: string;
  name: string;
}

function positiveInteger({ name, value }: Given): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new ConfigError(`${name} must be a positive integer, got "${value}"`);
  return Number(value);
}

/** `1`, `true`, `yes`, `on` or their opposites, in any case; anything else is a mistake worth naming. */
export function switchFrom({ name, value }: Given): boolean {
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  if (/^(0|false|no|off)$/i.test(value)) return false;
  throw new ConfigError(`${name} must be true or false (also 1/0, yes/no, on/off), got "${value}"`);
}

/**
 * The settings of a server start. `terminal` says whether a person watches standard output, which decides the `auto`
 * settings: readable log lines, and the demo account on the embedded store.
 */
export function configFrom(argv: string[], env: NodeJS.ProcessEnv = process.env, terminal = process.stdout.isTTY === true): Config {
  // Parsed as every command's flags are, so `tokenbell --prot 80` fails as `tokenbell users --prot` does.
  const flags = Object.fromEntries(settings.map((s) => [s.flag, 'arg' in s ? 'string' : 'boolean'])) as Record<Flag, 'string' | 'boolean'>;
  const { values } = parseFlags(argv, { ...flags, help: 'boolean' });
  /** The flag, else its environment variable (each named as given, for the messages), else undefined. */
  const given = (flag: Flag): Given | undefined => {
    const value = values[flag];
    if (typeof value === 'string') return { value, name: `--${flag}` };
    const variable = settings.find((s) => s.flag === flag)!.env;
    return variable === undefined || env[variable] === undefined ? undefined : { value: env[variable], name: variable };
  };
  const read = (flag: Flag): Given => given(flag) ?? { value: defaultOf(flag), name: `--${flag}` };
  // A switch is on as a flag, or as its variable says.
  const on = (flag: Flag): boolean => values[flag] === true || switchFrom(given(flag) ?? { value: 'false', name: '' });

  if (values.memory && values.data !== undefined) throw new ConfigError('--memory and --data contradict each other: keep data in memory, or in the file --data names, not both');
  const database = given('database-url');
  if (database !== undefined && (values.memory || values.data !== undefined)) {
    throw new ConfigError(`${database.name} and ${values.memory ? '--memory' : '--data'} contradict each other: keep data in PostgreSQL or in a file, not both`);
  }
  const databaseUrl = database === undefined ? null : databaseUrlFrom(database);
  const migrate = on('migrate');
  if (migrate && databaseUrl === null) throw new ConfigError('--migrate needs --database-url (or DATABASE_URL): the data file needs no migration');
  const port = positiveInteger(read('port'));
  if (port > 65535) throw new ConfigError(`${read('port').name} must be at most 65535, got ${port}`);
  const host = read('host');
  const baseUrl = baseUrlFrom(given('base-url'), host, port);
  const testHelpers = on('test-helpers');
  if (testHelpers && !on('test-helpers-on-public-host')) refuseExposedTestHelpers(host, baseUrl, given('trust-proxy'));
  const testHelpersToken = given('test-helpers-token');
  if (testHelpersToken !== undefined && !testHelpers) throw new ConfigError(`${testHelpersToken.name} is the test-helper area's token: it needs --test-helpers (TOKENBELL_TEST_HELPERS=true)`);
  const dataFile = values.memory || databaseUrl !== null ? null : read('data').value;
  const demo = given('demo');
  const logFormat = read('log-format');
  return {
    port,
    host: host.value,
    dataFile,
    databaseUrl,
    databasePoolSize: positiveInteger(read('database-pool-size')),
    databaseTimeout: positiveInteger(read('database-timeout')),
    migrate,
    tokenTtl: positiveInteger(read('token-ttl')),
    codeTtl: limits.codeTtlSeconds,
    idTokenTtl: idTokenTtlFrom(read('id-token-ttl')),
    baseUrl,
    seedFile: given('seed')?.value ?? null,
    validateResponses: on('validate-responses'),
    bodyLimit: limits.bodyLimit,
    secureCookies: baseUrl.startsWith('https:'),
    trustProxy: trustProxyFrom(read('trust-proxy')),
    introspectionClients: (given('introspection-clients')?.value ?? '')
      .split(',')
      .map((id) => id.trim())
      .filter((id) => id !== ''),
    passwordGrant: oneOf(passwordGrantSettings, read('password-grant')),
    sessionLifetime: positiveInteger(read('session-lifetime')),
    monitoringAllowlist: addressList(read('monitoring-allowlist')),
    logLevel: oneOf(logLevels, read('log-level')),
    logFormat: logFormat.value === 'auto' ? (terminal ? 'pretty' : 'json') : oneOf(logFormats, logFormat),
    testHelpers,
    testHelpersToken: testHelpersToken?.value ?? null,
    // A database is shared and production's: its first start must not make an account whose password went to a log.
    demo: values.demo === true || (demo === undefined || demo.value === 'auto' ? terminal && databaseUrl === null : switchFrom(demo)),
    smtpUrl: smtpUrlFrom(given('smtp-url')),
    mailFrom: given('mail-from')?.value ?? `tokenbell <notifications@${new URL(baseUrl).hostname}>`,
    shutdownTimeout: positiveInteger(read('shutdown-timeout')),
    gitlabVersion: gitlabVersionFrom(read('gitlab-version')),
  };
}

/** A release as the service numbers its own (`17.11.0`, `16.0.1-ee`): clients parse the leading numbers. */
function gitlabVersionFrom({ name, value }: Given): string {
  if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(value)) throw new ConfigError(`${name} ${JSON.stringify(value)} is not a GitLab release: give MAJOR.MINOR.PATCH, such as 17.11.0 or 17.11.0-ee`);
  return value;
}

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/** Whether only this machine can reach a server listening on `host`. */
export function isLoopbackHost(host: string): boolean {
  const address = host.replace(/^\[(.*)\]$/, '$1').replace(/^::ffff:(?=\d+\.)/i, '');
  if (address.toLowerCase() === 'localhost') return true;
  const version = isIP(address);
  return version !== 0 && loopback.check(address, version === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The test-helper area mints tokens for anyone, moves the clock and empties the store: it is meant for a test run on
 * this machine. Listening beyond loopback, a public base URL (a host other than loopback, or https) or a reverse
 * proxy in front (--trust-proxy) look like a real deployment, so they take a second setting.
 */
function refuseExposedTestHelpers(host: Given, baseUrl: string, trustProxy: Given | undefined): void {
  const { hostname, protocol } = new URL(baseUrl);
  const exposure = !isLoopbackHost(host.value)
    ? `${host.name} ${host.value} is reachable from other machines`
    : protocol === 'https:'
      ? `the base URL ${baseUrl} is https, as a deployment's is`
      : !isLoopbackHost(hostname)
        ? `the base URL ${baseUrl} names a host other than loopback`
        : trustProxy !== undefined && trustProxyFrom(trustProxy) !== false
          ? `${trustProxy.name} says a reverse proxy forwards other machines' requests`
          : null;
  if (exposure === null) return;
  throw new ConfigError(`--test-helpers lets any administrator token mint tokens, move the clock and reset the store, and ${exposure}: listen on loopback (--host 127.0.0.1) with a loopback http base URL and no proxy, or add --test-helpers-on-public-host (TOKENBELL_TEST_HELPERS_ON_PUBLIC_HOST=true) if this is a test environment meant to be shared`);
}

function idTokenTtlFrom(given: Given): number {
  const ttl = positiveInteger(given);
  // A key that signed an id_token is published for a day after rotation (domain/oidc/signing-keys.ts): a token must
  // not outlive the key that verifies it.
  if (ttl > 86_400) throw new ConfigError(`${given.name} must be at most 86400 (a day, as long as a retired signing key stays published), got ${ttl}`);
  return ttl;
}

/**
 * The public base URL: as given, or made of --host and --port, when a bad host is --host's mistake to name.
 */
function baseUrlFrom(given: Given | undefined, host: Given, port: number): string {
  const { value, name } = given ?? { value: `http://${host.value.includes(':') ? `[${host.value}]` : host.value}:${port}`, name: host.name };
  const baseUrl = value.replace(/\/+$/, '');
  let protocol: string;
  try {
    protocol = new URL(baseUrl).protocol;
  } catch {
    if (given === undefined) throw new ConfigError(`${host.name} must be a host name or an IP address, got "${host.value}"`);
    throw new ConfigError(`${name} must be an absolute URL, got "${baseUrl}"`);
  }
  if (protocol !== 'http:' && protocol !== 'https:') throw new ConfigError(`${name} must be an http or https URL, got "${baseUrl}"`);
  return baseUrl;
}

/**
 * A URL with a user and password in it, checked before the driver reads it. The user or password may hold anything,
 * so no part of it is shown; a driver would read an unencoded `@`, `#` or `/` in it as the start of the host, the
 * fragment or the path, and name the wrong problem, or echo the password in its error.
 */
function serverUrlFrom({ name, value }: Given, schemes: readonly string[], kind: string): string {
  const scheme = /^([a-z]+):\/\//i.exec(value)?.[1]?.toLowerCase();
  if (scheme === undefined || !schemes.includes(scheme)) throw new ConfigError(`${name} must be ${kind}`);
  const authority = value.slice(scheme.length + 3).split(/[/?]/)[0]!;
  const encode = 'percent-encode @ # / ? % : and spaces in the user name and password (%40 %23 %2F %3F %25 %3A %20)';
  if (authority.split('@').length > 2) throw new ConfigError(`${name} has more than one @ before its host: ${encode}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name} is not a URL that can be read (a space in the host, or an unencoded character in the password?): ${encode}`);
  }
  if (url.hash !== '') throw new ConfigError(`${name} has a # in it: ${encode}`);
  // PostgreSQL's URL may leave the host out (postgres:///db?host=/run/postgresql, a local socket); an SMTP URL may not.
  if (url.hostname === '' && schemes.includes('smtp')) throw new ConfigError(`${name} has no host: ${encode}`);
  if (url.username === '' && url.password === '' && value.includes('@')) throw new ConfigError(`${name} has an @ after its host: ${encode}`);
  return value;
}

export const databaseUrlFrom = (given: Given): string => serverUrlFrom(given, ['postgres', 'postgresql'], 'a postgres:// or postgresql:// URL');

/** A command's database: --database-url, else DATABASE_URL unless --data names a file; checked, or null for none. */
export function databaseUrlOf(values: { data?: string | undefined; 'database-url'?: string | undefined }, env: NodeJS.ProcessEnv): string | null {
  if (values['database-url'] !== undefined) return databaseUrlFrom({ value: values['database-url'], name: '--database-url' });
  return values.data === undefined && env.DATABASE_URL !== undefined ? databaseUrlFrom({ value: env.DATABASE_URL, name: 'DATABASE_URL' }) : null;
}

function smtpUrlFrom(given: Given | undefined): string | null {
  // nodemailer would read anything else as a transport of another kind and fail at the first message, not here.
  return given === undefined ? null : serverUrlFrom(given, ['smtp', 'smtps'], 'an smtp:// or smtps:// URL (smtp://user:password@mail.example.com:587)');
}

function oneOf<T extends string>(allowed: readonly T[], { name, value }: Given): T {
  if (!(allowed as readonly string[]).includes(value)) throw new ConfigError(`${name} must be ${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}, got "${value}"`);
  return value as T;
}

/** Addresses and subnets, comma-separated, checked as Express checks `trust proxy` (so a typo stops the start). */
function addressList({ name, value }: Given): string[] {
  const list = value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  try {
    express().set('trust proxy', list);
  } catch (error) {
    throw new ConfigError(`${name} must list addresses or subnets (loopback, 10.0.0.0/8, ...): ${(error as Error).message}`);
  }
  return list;
}

/** `true`, `false`, a number of hops, or addresses and subnets (`loopback`, `10.0.0.0/8`, ...) as Express takes them. */
function trustProxyFrom({ name, value }: Given): boolean | number | string {
  if (value === 'false') return false;
  if (value === 'true') return true;
  const setting = /^\d+$/.test(value) ? Number(value) : value;
  try {
    // Express compiles the setting as it is set, so a bad address is caught here, at start-up, with its name.
    express().set('trust proxy', setting);
  } catch (error) {
    throw new ConfigError(`${name} must be true, false, a number of hops, or addresses and subnets: ${(error as Error).message}`);
  }
  return setting;
}

/**
 * Settings that work but are rarely what the operator meant, each as one line for the log at start-up.
 * `--trust-proxy true` believes the left-most X-Forwarded-For address, which the client writes itself: anyone could
 * then pick a fresh address for every guess and never meet the per-address sign-in limit.
 */
export function configWarnings(config: Pick<Config, 'trustProxy'>): string[] {
  const warnings: string[] = [];
  if (config.trustProxy === true) {
    warnings.push(
      '--trust-proxy true believes any X-Forwarded-For a client sends, so clients can choose their own address for the sign-in throttle; name the proxy instead (loopback, its address or subnet) or the number of proxies in front',
    );
  }
  return warnings;
}

const wrap = (text: string, width: number, indent: string): string => {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  return [...lines, line].join(`\n${indent}`);
};

/** --help, from the settings table. */
export const usage = `Usage: tokenbell [options]
       tokenbell users create|list|block|delete|...      (accounts; tokenbell users --help)
       tokenbell migrate --database-url URL              (PostgreSQL schema; tokenbell migrate --help)
       tokenbell keys rotate ...                         (a new id_token signing key; tokenbell keys --help)
       tokenbell test-helpers <operation> [JSON] ...     (the test-helper area; tokenbell test-helpers --help)
       tokenbell events emit|messages ...                (notification test helpers; tokenbell events --help)
       tokenbell hash-password < FILE                    (a seed's password_hash; tokenbell hash-password --help)

  -h, --help              this text
  --version               the version of @tokenbell/server

${settings
  .map((s) => {
    const name = `--${s.flag}${'arg' in s ? ` ${s.arg}` : ''}`;
    const where = [s.env, s.default === 'none' || s.default === 'off' ? undefined : `default ${s.default}`].filter(Boolean).join(', ');
    const text = `${s.help}${where ? ` (${where})` : ''}`;
    const indent = ' '.repeat(26);
    return name.length <= 22 ? `  ${name.padEnd(24)}${wrap(text, 90, indent)}` : `  ${name}\n${indent}${wrap(text, 90, indent)}`;
  })
  .join('\n')}
`;
