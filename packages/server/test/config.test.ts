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

describe('contradictions and bad values, refused with the flag named', () => {
  it.each([
    [['--memory', '--data', 'x.json'], /--memory and --data/],
    [['--base-url', 'ftp://files.example.com'], /--base-url must be an http or https URL/],
    [['--base-url', 'not a url'], /--base-url must be an absolute URL/],
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
    const text = await readme();
    expect(limits.codeTtlSeconds).toBe(600);
    expect(text).toContain('authorization codes live 10 minutes');
    expect(text).toContain(`request bodies are limited to ${limits.bodyLimit.replace('kb', ' kB')}`);
    expect(text).toContain(`a browser session ends after ${limits.sessionIdleSeconds / 3600} hours without a request`);
    expect(text).toContain(`two-factor sign-in waits ${limits.twoFactorStepSeconds / 60} minutes`);
    expect(text).toContain(`from ${limits.minCompactionBytes / 2 ** 20} MiB`);
    expect(text).toContain(`after ${limits.loginThrottle.perAddress.failures} failures every attempt from that address is refused`);
    expect(text).toContain(`after ${limits.loginThrottle.perLogin.failures} failures, from any addresses`);
  });
});
