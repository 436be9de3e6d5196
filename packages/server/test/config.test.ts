import { describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { ConfigError, configFrom, configWarnings, isLoopbackHost, limits, settings, usage } from '../src/config.js';
import { document } from '../src/openapi/document.js';

describe('--trust-proxy', () => {
  it.each([
    [[], {}, false],
    [['--trust-proxy', 'false'], {}, false],
    [['--trust-proxy', 'true'], {}, true],
    [['--trust-proxy', '2'], {}, 2],
    [['--trust-proxy', 'loopback, 10.0.0.0/8'], {}, 'loopback, 10.0.0.0/8'],
    [[], { TOKENBELL_TRUST_PROXY: 'uniquelocal' }, 'uniquelocal'],
  ])('%j with %j is %j', (argv, env, expected) => {
    expect(configFrom(argv, env).trustProxy).toEqual(expected);
  });

  it('warns about true, which lets a client pick its own address, and about nothing else', () => {
    expect(configWarnings(configFrom(['--trust-proxy', 'true']))).toEqual([expect.stringMatching(/^--trust-proxy true .*X-Forwarded-For.*loopback/)]);
    for (const safe of [[], ['--trust-proxy', 'loopback'], ['--trust-proxy', '1'], ['--trust-proxy', 'false']]) {
      expect(configWarnings(configFrom(safe))).toEqual([]);
    }
  });

  it('refuses an address that is not one, at start-up, naming it', () => {
    expect(() => configFrom(['--trust-proxy', 'loopback, 10.0.0.300'])).toThrow(ConfigError);
    expect(() => configFrom(['--trust-proxy', 'loopback, 10.0.0.300'])).toThrow(/10\.0\.0\.300/);
  });
});

describe('--introspection-clients', () => {
  it('reads a comma-separated list of App IDs from the flag or the environment, empty by default', () => {
    expect(configFrom([]).introspectionClients).toEqual([]);
    expect(configFrom(['--introspection-clients', 'a1, b2,,']).introspectionClients).toEqual(['a1', 'b2']);
    expect(configFrom([], { TOKENBELL_INTROSPECTION_CLIENTS: 'rs-1' }).introspectionClients).toEqual(['rs-1']);
  });
});

describe('--database-timeout', () => {
  it('is 5 seconds unless the flag or the environment says otherwise, and a positive number of seconds', () => {
    expect(configFrom([]).databaseTimeout).toBe(5);
    expect(configFrom(['--database-timeout', '2']).databaseTimeout).toBe(2);
    expect(configFrom([], { TOKENBELL_DATABASE_TIMEOUT: '30' }).databaseTimeout).toBe(30);
    expect(() => configFrom(['--database-timeout', '0'])).toThrow(ConfigError);
    expect(() => configFrom(['--database-timeout', '1.5'])).toThrow(/--database-timeout must be a positive integer/);
  });
});

describe('--gitlab-version', () => {
  it('is the release the version calls answer as: 17.11.0 unless given, and refused with one line when not a release', () => {
    expect(configFrom([]).gitlabVersion).toBe('17.11.0');
    expect(configFrom(['--gitlab-version', '16.0.1-ee']).gitlabVersion).toBe('16.0.1-ee');
    expect(configFrom([], { TOKENBELL_GITLAB_VERSION: '8.13.0' }).gitlabVersion).toBe('8.13.0');
    expect(() => configFrom(['--gitlab-version', 'latest'])).toThrow(new ConfigError('--gitlab-version "latest" is not a GitLab release: give MAJOR.MINOR.PATCH, such as 17.11.0 or 17.11.0-ee'));
    expect(() => configFrom([], { TOKENBELL_GITLAB_VERSION: '17' })).toThrow(/^TOKENBELL_GITLAB_VERSION "17" is not a GitLab release/);
  });
});

describe('notification mail and test helpers', () => {
  it('sends mail through --smtp-url from --mail-from (the base URL\'s host by default), and serves test helpers only when asked', () => {
    const plain = configFrom(['--base-url', 'https://bell.example.com'], {});
    expect(plain).toMatchObject({ smtpUrl: null, mailFrom: 'tokenbell <notifications@bell.example.com>', testHelpers: false });
    expect(configFrom(['--smtp-url', 'smtps://u:p@mail.example.com:465', '--mail-from', 'Bell <bell@example.com>', '--test-helpers'], {})).toMatchObject({
      smtpUrl: 'smtps://u:p@mail.example.com:465',
      mailFrom: 'Bell <bell@example.com>',
      testHelpers: true,
    });
    expect(configFrom([], { TOKENBELL_SMTP_URL: 'smtp://127.0.0.1:2525', TOKENBELL_TEST_HELPERS: 'true' })).toMatchObject({ smtpUrl: 'smtp://127.0.0.1:2525', testHelpers: true });
  });
});

describe('switches in the environment', () => {
  const switches = [
    ['TOKENBELL_TEST_HELPERS', 'testHelpers'],
    ['TOKENBELL_VALIDATE_RESPONSES', 'validateResponses'],
  ] as const;
  it.each(switches)('%s takes 1/true/yes/on and 0/false/no/off in any case', (variable, key) => {
    for (const value of ['1', 'true', 'TRUE', 'yes', 'Yes', 'on', 'ON']) expect(configFrom([], { [variable]: value })[key], value).toBe(true);
    for (const value of ['0', 'false', 'False', 'no', 'NO', 'off', 'Off']) expect(configFrom([], { [variable]: value })[key], value).toBe(false);
    expect(configFrom([], {})[key]).toBe(false);
  });

  it.each([...switches.map(([variable]) => variable), 'TOKENBELL_MIGRATE'])('%s refuses anything else, naming the variable', (variable) => {
    for (const value of ['', 'enabled', '2', 'y', 'true ']) {
      expect(() => configFrom([], { [variable]: value, DATABASE_URL: 'postgres://db.example.com/bell' })).toThrow(new ConfigError(`${variable} must be true or false (also 1/0, yes/no, on/off), got "${value}"`));
    }
  });

  it('turns --migrate on from TOKENBELL_MIGRATE=1', () => {
    expect(configFrom([], { TOKENBELL_MIGRATE: '1', DATABASE_URL: 'postgres://db.example.com/bell' }).migrate).toBe(true);
  });
});

describe('a mistake in the environment names the variable, not the flag', () => {
  it.each([
    [{ PORT: 'eighty' }, 'PORT must be a positive integer, got "eighty"'],
    [{ PORT: '70000' }, 'PORT must be at most 65535, got 70000'],
    [{ TOKENBELL_TOKEN_TTL: '0' }, 'TOKENBELL_TOKEN_TTL must be a positive integer, got "0"'],
    [{ TOKENBELL_ID_TOKEN_TTL: '90000' }, /^TOKENBELL_ID_TOKEN_TTL must be at most 86400/],
    [{ TOKENBELL_LOG_LEVEL: 'loud' }, /^TOKENBELL_LOG_LEVEL must be fatal, /],
    [{ TOKENBELL_PASSWORD_GRANT: 'some' }, /^TOKENBELL_PASSWORD_GRANT must be /],
    [{ TOKENBELL_BASE_URL: 'ftp://x.example' }, /^TOKENBELL_BASE_URL must be an http or https URL/],
    [{ TOKENBELL_TRUST_PROXY: '10.0.0.300' }, /^TOKENBELL_TRUST_PROXY must be true, false/],
    [{ TOKENBELL_MONITORING_ALLOWLIST: '10.0.0.300' }, /^TOKENBELL_MONITORING_ALLOWLIST must list addresses/],
    [{ TOKENBELL_SMTP_URL: 'mail.example.com' }, /^TOKENBELL_SMTP_URL must be an smtp:\/\/ or smtps:\/\/ URL/],
    [{ DATABASE_URL: 'mysql://db.example.com/bell' }, /^DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL/],
    [{ TOKENBELL_HOST: '999.1.1.1' }, 'TOKENBELL_HOST must be a host name or an IP address, got "999.1.1.1"'],
  ])('%j', (env, message) => {
    expect(() => configFrom([], env)).toThrow(ConfigError);
    expect(() => configFrom([], env)).toThrow(message);
  });
});

describe('server URLs with a password in them', () => {
  it.each([
    ['--database-url', 'postgres://bell:hun@ter#2@db.example.com/bell', /^--database-url has more than one @ before its host: percent-encode @ #/],
    ['--database-url', 'postgres://bell:hun#ter2@db.example.com/bell', /^--database-url is not a URL that can be read/],
    ['--database-url', 'postgres://bell:hunter2@db example.com/bell', /^--database-url is not a URL that can be read \(a space in the host/],
    ['--database-url', 'postgres://bell#hunter2@db.example.com/bell', /^--database-url has a # in it/],
    ['--database-url', 'postgres://bell:1234?hunter2@db.example.com/bell', /^--database-url has an @ after its host/],
    ['--smtp-url', 'smtp://bell:hun@ter#2@mail.example.com:587', /^--smtp-url has more than one @ before its host/],
    ['--smtp-url', 'smtps://bell:hun#ter2@mail.example.com', /^--smtp-url is not a URL that can be read/],
    ['--smtp-url', 'smtp://bell:hunter2@mail example.com', /^--smtp-url is not a URL that can be read/],
  ])('%s %s is one line naming the flag, without the password', (flag, url, message) => {
    let error: unknown;
    try {
      configFrom([flag, url], {});
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const text = (error as Error).message;
    expect(text).toMatch(message);
    expect(text).not.toContain('\n');
    for (const part of ['hun', 'ter2', 'ter#2', '1234']) expect(text).not.toContain(part);
  });

  it('takes a percent-encoded password as it is', () => {
    const url = 'postgres://bell:pa%40ss%23word@db.example.com:5432/bell';
    expect(configFrom(['--database-url', url], {}).databaseUrl).toBe(url);
    // A local socket, named in the query: no host in the URL.
    expect(configFrom(['--database-url', 'postgres:///bell?host=/run/postgresql'], {}).databaseUrl).toBe('postgres:///bell?host=/run/postgresql');
    expect(configFrom(['--smtp-url', 'smtp://bell:pa%40ss@mail.example.com:587'], {}).smtpUrl).toBe('smtp://bell:pa%40ss@mail.example.com:587');
  });
});

describe('contradictions and bad values, refused with the flag named', () => {
  it.each([
    [['--memory', '--data', 'x.json'], /--memory and --data/],
    [['--base-url', 'ftp://files.example.com'], /--base-url must be an http or https URL/],
    [['--base-url', 'not a url'], /--base-url must be an absolute URL/],
    [['--smtp-url', 'mail.example.com:25'], /--smtp-url must be an smtp:\/\/ or smtps:\/\/ URL/],
    [['--host', '999.1.1.1'], '--host must be a host name or an IP address, got "999.1.1.1"'],
    [['--host', 'bell host'], '--host must be a host name or an IP address, got "bell host"'],
    [['--token-ttl', '-5'], '--token-ttl must be a positive integer, got "-5"'],
    [['--port', '-1'], '--port must be a positive integer, got "-1"'],
  ])('%j', (argv, message) => {
    expect(() => configFrom(argv, {})).toThrow(ConfigError);
    expect(() => configFrom(argv, {})).toThrow(message);
  });
});

describe('--help', () => {
  it('names every setting with its environment variable, and -h and --version', () => {
    for (const setting of settings) {
      expect(usage).toContain(`--${setting.flag}`);
      if (setting.env) expect(usage).toContain(setting.env);
    }
    expect(usage).toContain('-h, --help');
    expect(usage).toContain('--version');
  });

  it('is the only list of flags: configFrom refuses a flag the table lacks', () => {
    expect(() => configFrom(['--no-such-flag'], {})).toThrow(/Unknown option '--no-such-flag'/);
  });
});

describe('what a terminal decides', () => {
  const database = ['--database-url', 'postgres://tokenbell@127.0.0.1/tokenbell'];
  it('makes the demo by default only on the embedded store at a terminal, and whenever asked', () => {
    expect(configFrom([], {}, true).demo).toBe(true);
    expect(configFrom(['--memory'], {}, true).demo).toBe(true);
    expect(configFrom([], {}, false).demo).toBe(false);
    expect(configFrom(database, {}, true).demo).toBe(false);
    expect(configFrom(database, { TOKENBELL_DEMO: 'yes' }, false).demo).toBe(true);
    expect(configFrom(['--demo'], {}, false).demo).toBe(true);
    expect(configFrom([], { TOKENBELL_DEMO: 'off' }, true).demo).toBe(false);
    expect(configFrom([], { TOKENBELL_DEMO: 'auto' }, true).demo).toBe(true);
    expect(() => configFrom([], { TOKENBELL_DEMO: 'maybe' })).toThrow('TOKENBELL_DEMO must be true or false (also 1/0, yes/no, on/off), got "maybe"');
  });

  it('writes readable log lines at a terminal and JSON elsewhere, unless told', () => {
    expect(configFrom([], {}, true).logFormat).toBe('pretty');
    expect(configFrom([], {}, false).logFormat).toBe('json');
    expect(configFrom(['--log-format', 'json-iso'], {}, true).logFormat).toBe('json-iso');
    expect(() => configFrom([], { TOKENBELL_LOG_FORMAT: 'xml' })).toThrow('TOKENBELL_LOG_FORMAT must be json, json-iso or pretty, got "xml"');
  });
});

describe('the test-helper area on a reachable host', () => {
  it.each(['127.0.0.1', '127.3.2.1', '::1', '[::1]', 'localhost', '::ffff:127.0.0.1'])('knows %s is loopback', (host) => {
    expect(isLoopbackHost(host)).toBe(true);
  });
  it.each(['0.0.0.0', '::', '10.0.0.5', 'tokenbell.internal', '128.0.0.1'])('knows %s is not', (host) => {
    expect(isLoopbackHost(host)).toBe(false);
  });
  it('is refused there, and behind https, unless a second setting says it is meant', () => {
    expect(() => configFrom(['--test-helpers', '--host', '10.0.0.5'], {})).toThrow(/--host 10\.0\.0\.5 is reachable from other machines: .* add --test-helpers-on-public-host/);
    expect(() => configFrom(['--host', '0.0.0.0'], { TOKENBELL_TEST_HELPERS: '1' })).toThrow(ConfigError);
    expect(() => configFrom(['--test-helpers', '--base-url', 'https://tokenbell.example'], {})).toThrow(/the base URL https:\/\/tokenbell\.example is https/);
    expect(configFrom(['--test-helpers', '--host', '0.0.0.0', '--test-helpers-on-public-host'], {}).testHelpers).toBe(true);
    expect(configFrom(['--host', '0.0.0.0'], {}).testHelpers).toBe(false);
  });
  it('is refused on a loopback listener whose base URL names another host, or behind a trusted proxy, unless told', () => {
    expect(() => configFrom(['--test-helpers', '--base-url', 'http://tokenbell.test:3000'], {})).toThrow(/the base URL http:\/\/tokenbell\.test:3000 names a host other than loopback: .* add --test-helpers-on-public-host/);
    expect(() => configFrom(['--test-helpers', '--trust-proxy', 'loopback'], {})).toThrow(/--trust-proxy says a reverse proxy forwards other machines' requests: .* add --test-helpers-on-public-host/);
    expect(() => configFrom(['--test-helpers'], { TOKENBELL_TRUST_PROXY: '1' })).toThrow(/TOKENBELL_TRUST_PROXY says a reverse proxy/);
    for (const allowed of [['--base-url', 'http://127.0.0.1:3000'], ['--base-url', 'http://[::1]:3000'], ['--base-url', 'http://localhost:3000'], ['--trust-proxy', 'false']]) {
      expect(configFrom(['--test-helpers', ...allowed], {}).testHelpers).toBe(true);
    }
    expect(configFrom(['--test-helpers', '--trust-proxy', 'loopback', '--base-url', 'http://tokenbell.test'], { TOKENBELL_TEST_HELPERS_ON_PUBLIC_HOST: 'yes' }).testHelpers).toBe(true);
  });
});

describe('the guides', () => {
  // Running the reference server has the settings and the limits; the security model has the sign-in throttle's.
  const guide = (name: 'running.md' | 'security.md') => readFile(new URL(`../../../docs/${name}`, import.meta.url), 'utf8');

  it('has the configuration table of config.ts, row for row', async () => {
    const text = await guide('running.md');
    expect(text).toContain('| setting | flag | environment | default |');
    const start = text.indexOf('| setting | flag | environment | default |');
    const rows = text.slice(start).split('\n\n')[0]!.split('\n').slice(2);
    const expected = settings.map((s) => {
      const flag = `\`--${s.flag}${'arg' in s ? ` ${s.arg}` : ''}\``.replace(/\|/g, '\\|');
      const shown = s.default === 'none' || s.default === 'off' ? s.default : `\`${s.default}\``;
      return `| ${s.help.replace(/\|/g, '\\|')} | ${flag} | ${s.env ? `\`${s.env}\`` : '—'} | ${shown} |`;
    });
    expect(rows).toEqual(expected);
  });

  it('states the fixed limits config.ts uses', async () => {
    // Line breaks and indentation in the guides are not the limits' business.
    const text = (await guide('running.md')).replace(/\s+/g, ' ');
    const security = (await guide('security.md')).replace(/\s+/g, ' ');
    const throttle = limits.loginThrottle;
    expect(text).toContain(`authorization codes live ${inWords(limits.codeTtlSeconds)}`);
    expect(text).toContain(`request bodies are limited to ${limits.bodyLimit.replace('kb', ' kB')}`);
    expect(text).toContain(`a browser session ends after ${inWords(limits.sessionIdleSeconds)} without a request`);
    expect(text).toContain(`two-factor sign-in waits ${inWords(limits.twoFactorStepSeconds)}`);
    expect(text).toContain(`sessions are dropped every ${inWords(limits.pruneIntervalSeconds)}`);
    expect(text).toContain(`codes and tokens only once they have been expired or revoked for ${inWords(limits.pruneGraceSeconds, 'hours')}`);
    expect(text).toContain(`from ${limits.minCompactionBytes / 2 ** 20} MiB`);
    expect(text).toContain(`each with \`Retry-After: ${limits.storeRetryAfterSeconds}\``);
    // Brute-force protection: one window length for both counts, and how long an address stays known.
    expect(throttle.perLogin.windowSeconds).toBe(throttle.perAddress.windowSeconds);
    expect(security).toContain(`in two fixed windows of ${inWords(throttle.perAddress.windowSeconds)}`);
    expect(security).toContain(`hold a login for at most ${inWords(throttle.perLogin.windowSeconds)} at a time`);
    expect(security).toContain(`signed in from successfully in the last ${inWords(throttle.knownAddressSeconds)}`);
    expect(security).toContain(`after ${throttle.perAddress.failures} failures every attempt from that address is refused`);
    expect(security).toContain(`after ${throttle.perLogin.failures} failures, from any addresses`);
    const device = limits.deviceAuthorization;
    expect(security).toContain(`more than ${throttle.deviceStartsPerAddress.requests} a ${inWords(throttle.deviceStartsPerAddress.windowSeconds)} from one address`);
    expect(security).toContain(`one more while ${device.pendingPerClient} of the application's wait`);
    expect(text).toContain(`Device codes live ${inWords(device.expiresInSeconds)}, and a device polls at most every ${inWords(device.intervalSeconds)}`);
    // The document states the same limits to the device authorization endpoint's callers.
    const endpoint = (document.paths['/oauth/authorize_device'].post.description as string).replace(/\s+/g, ' ');
    expect(endpoint).toContain(`more than ${throttle.deviceStartsPerAddress.requests} a ${inWords(throttle.deviceStartsPerAddress.windowSeconds)} from one client address`);
    expect(endpoint).toContain(`or a ${device.pendingPerClient}th of one application's still waiting`);
  });

  it('spells durations as the guides do', () => {
    expect([600, 3600, 8 * 3600, 30 * 86400].map((s) => inWords(s))).toEqual(['10 minutes', 'hour', '8 hours', '30 days']);
    expect(inWords(86400, 'hours')).toBe('24 hours');
  });
});

const units = [['day', 86400], ['hour', 3600], ['minute', 60], ['second', 1]] as const;
type Unit = (typeof units)[number][0];

/**
 * A duration as the guides write it, in the largest unit it is a whole number of (or in `inUnit`): `10 minutes`,
 * `30 days`, and the bare unit for one of it (`hour`, as in "every hour").
 */
function inWords(seconds: number, inUnit?: `${Unit}s`): string {
  const [unit, size] = units.find(([name, size]) => (inUnit ? `${name}s` === inUnit : seconds % size === 0))!;
  const count = seconds / size;
  return count === 1 ? unit : `${count} ${unit}s`;
}
