import { describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { ConfigError, configFrom, configWarnings, limits, settings, usage } from '../src/config.js';

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
    expect(configFrom([], { TOKENBELL_TEST_HELPERS: 'yes' }).testHelpers).toBe(false);
  });
});

describe('contradictions and bad values, refused with the flag named', () => {
  it.each([
    [['--memory', '--data', 'x.json'], /--memory and --data/],
    [['--base-url', 'ftp://files.example.com'], /--base-url must be an http or https URL/],
    [['--base-url', 'not a url'], /--base-url must be an absolute URL/],
    [['--smtp-url', 'mail.example.com:25'], /--smtp-url must be an smtp:\/\/ or smtps:\/\/ URL/],
    // The password in a mistyped URL is not repeated back.
    [['--smtp-url', 'http://user:secret@mail.example.com'], /got "http:\/\/\*\*\*@mail\.example\.com"/],
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

describe('the README', () => {
  const readme = () => readFile(new URL('../../../README.md', import.meta.url), 'utf8');

  it('has the configuration table of config.ts, row for row', async () => {
    const text = await readme();
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
    // Line breaks and indentation in the README are not the limits' business.
    const text = (await readme()).replace(/\s+/g, ' ');
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
    expect(text).toContain(`in two fixed windows of ${inWords(throttle.perAddress.windowSeconds)}`);
    expect(text).toContain(`hold a login for at most ${inWords(throttle.perLogin.windowSeconds)} at a time`);
    expect(text).toContain(`signed in from successfully in the last ${inWords(throttle.knownAddressSeconds)}`);
    expect(text).toContain(`after ${throttle.perAddress.failures} failures every attempt from that address is refused`);
    expect(text).toContain(`after ${throttle.perLogin.failures} failures, from any addresses`);
  });

  it('spells durations as the README does', () => {
    expect([600, 3600, 8 * 3600, 30 * 86400].map((s) => inWords(s))).toEqual(['10 minutes', 'hour', '8 hours', '30 days']);
    expect(inWords(86400, 'hours')).toBe('24 hours');
  });
});

const units = [['day', 86400], ['hour', 3600], ['minute', 60], ['second', 1]] as const;
type Unit = (typeof units)[number][0];

/**
 * A duration as the README writes it, in the largest unit it is a whole number of (or in `inUnit`): `10 minutes`,
 * `30 days`, and the bare unit for one of it (`hour`, as in "every hour").
 */
function inWords(seconds: number, inUnit?: `${Unit}s`): string {
  const [unit, size] = units.find(([name, size]) => (inUnit ? `${name}s` === inUnit : seconds % size === 0))!;
  const count = seconds / size;
  return count === 1 ? unit : `${count} ${unit}s`;
}
