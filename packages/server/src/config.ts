// Settings come from flags, then the environment, then defaults; see the README's configuration table.
import { parseArgs } from 'node:util';
import express from 'express';
import { type PasswordGrantSetting, passwordGrantSettings } from './domain/oauth/grants.js';
import { ExplainedError } from './explained-error.js';

export interface Config {
  port: number;
  host: string;
  /** The JSON data file, or null for an in-memory store (tests). */
  dataFile: string | null;
  /** Access token lifetime in seconds (expires_in). */
  tokenTtl: number;
  /** Authorization code lifetime in seconds. */
  codeTtl: number;
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
  /** Seconds after sign-in at which a browser session ends, however active (the idle timeout is sessionIdleSeconds). */
  sessionLifetime: number;
}

export const defaults = {
  port: 3000,
  host: '127.0.0.1',
  dataFile: './data/tokenbell.json',
  tokenTtl: 7200,
  codeTtl: 600,
  bodyLimit: '100kb',
  sessionLifetime: 24 * 60 * 60,
} as const;

/** A browser session that made no request for this long has ended (8 hours, as a working day). */
export const sessionIdleSeconds = 8 * 60 * 60;

export class ConfigError extends ExplainedError {}

function positiveInteger(name: string, value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new ConfigError(`${name} must be a positive integer, got "${value}"`);
  return Number(value);
}

export function configFrom(argv: string[], env: NodeJS.ProcessEnv = process.env): Config {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      data: { type: 'string' },
      memory: { type: 'boolean' },
      'token-ttl': { type: 'string' },
      'base-url': { type: 'string' },
      seed: { type: 'string' },
      'validate-responses': { type: 'boolean' },
      'trust-proxy': { type: 'string' },
      'introspection-clients': { type: 'string' },
      'password-grant': { type: 'string' },
      'session-lifetime': { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.memory && values.data !== undefined) throw new ConfigError('--memory and --data contradict each other: keep data in memory, or in the file --data names, not both');
  const port = positiveInteger('--port', values.port ?? env.PORT ?? String(defaults.port));
  if (port > 65535) throw new ConfigError(`--port must be at most 65535, got ${port}`);
  const host = values.host ?? env.TOKENBELL_HOST ?? defaults.host;
  const baseUrl = (values['base-url'] ?? env.TOKENBELL_BASE_URL ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, '');
  let protocol: string;
  try {
    protocol = new URL(baseUrl).protocol;
  } catch {
    throw new ConfigError(`--base-url must be an absolute URL, got "${baseUrl}"`);
  }
  if (protocol !== 'http:' && protocol !== 'https:') throw new ConfigError(`--base-url must be an http or https URL, got "${baseUrl}"`);
  return {
    port,
    host,
    dataFile: values.memory ? null : (values.data ?? env.TOKENBELL_DATA ?? defaults.dataFile),
    tokenTtl: positiveInteger('--token-ttl', values['token-ttl'] ?? env.TOKENBELL_TOKEN_TTL ?? String(defaults.tokenTtl)),
    codeTtl: defaults.codeTtl,
    baseUrl,
    seedFile: values.seed ?? env.TOKENBELL_SEED ?? null,
    validateResponses: values['validate-responses'] ?? env.TOKENBELL_VALIDATE_RESPONSES === 'true',
    bodyLimit: defaults.bodyLimit,
    secureCookies: baseUrl.startsWith('https:'),
    trustProxy: trustProxyFrom(values['trust-proxy'] ?? env.TOKENBELL_TRUST_PROXY),
    introspectionClients: (values['introspection-clients'] ?? env.TOKENBELL_INTROSPECTION_CLIENTS ?? '')
      .split(',')
      .map((id) => id.trim())
      .filter((id) => id !== ''),
    passwordGrant: oneOf('--password-grant', passwordGrantSettings, values['password-grant'] ?? env.TOKENBELL_PASSWORD_GRANT ?? 'any'),
    sessionLifetime: positiveInteger('--session-lifetime', values['session-lifetime'] ?? env.TOKENBELL_SESSION_LIFETIME ?? String(defaults.sessionLifetime)),
  };
}

function oneOf<T extends string>(name: string, allowed: readonly T[], value: string): T {
  if (!(allowed as readonly string[]).includes(value)) throw new ConfigError(`${name} must be ${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}, got "${value}"`);
  return value as T;
}

/** `true`, `false`, a number of hops, or addresses and subnets (`loopback`, `10.0.0.0/8`, ...) as Express takes them. */
function trustProxyFrom(value: string | undefined): boolean | number | string {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  const setting = /^\d+$/.test(value) ? Number(value) : value;
  try {
    // Express compiles the setting as it is set, so a bad address is caught here, at start-up, with its name.
    express().set('trust proxy', setting);
  } catch (error) {
    throw new ConfigError(`--trust-proxy must be true, false, a number of hops, or addresses and subnets: ${(error as Error).message}`);
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

export const usage = `Usage: tokenbell [options]

  -h, --help            this text
  --version             the version of @tokenbell/server

  --port N              port to listen on (PORT, default 3000)
  --host H              address to listen on (TOKENBELL_HOST, default 127.0.0.1)
  --data FILE           JSON data file (TOKENBELL_DATA, default ./data/tokenbell.json)
  --memory              keep data in memory only (not with --data)
  --token-ttl SECONDS   access token lifetime (TOKENBELL_TOKEN_TTL, default 7200)
  --base-url URL        public base URL (TOKENBELL_BASE_URL, default http://HOST:PORT)
  --seed FILE           load users, groups, projects and applications from a JSON fixture
                        (TOKENBELL_SEED)
  --validate-responses  validate every response against the OpenAPI document
                        (TOKENBELL_VALIDATE_RESPONSES=true)
  --trust-proxy VALUE   trust X-Forwarded-* from these proxies: true, a hop count, or
                        addresses/subnets such as loopback (TOKENBELL_TRUST_PROXY, default false)
  --introspection-clients IDS
                        App IDs (comma-separated) of resource servers that may introspect
                        every token; other clients only their own (TOKENBELL_INTROSPECTION_CLIENTS)
  --password-grant any|clients|off
                        who may use the password grant: anyone (the spec), authenticated clients
                        only, or nobody (TOKENBELL_PASSWORD_GRANT, default any)
  --session-lifetime SECONDS
                        a signed-in browser session ends this long after sign-in, however
                        active (TOKENBELL_SESSION_LIFETIME, default 86400); idle ones after 8 hours
`;
