import { describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { ConfigError, configFrom, configWarnings, usage } from '../src/config.js';

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
  it('names every flag and every environment variable the configuration reads', async () => {
    const source = await readFile(new URL('../src/config.ts', import.meta.url), 'utf8');
    const variables = new Set([...source.matchAll(/env\.([A-Z_]+)/g)].map((m) => m[1]!));
    const flags = new Set([...source.matchAll(/^\s+'?([a-z][a-z-]*)'?: \{ type: '(?:string|boolean)' \}/gm)].map((m) => m[1]!));
    expect(variables.size).toBeGreaterThan(5);
    expect(flags.size).toBeGreaterThan(5);
    for (const variable of variables) expect(usage).toContain(variable);
    for (const flag of flags) expect(usage).toContain(`--${flag}`);
  });
});

describe('--password-grant', () => {
  it('is any unless the flag or TOKENBELL_PASSWORD_GRANT says clients or off', () => {
    expect(configFrom([], {}).passwordGrant).toBe('any');
    expect(configFrom(['--password-grant', 'clients'], {}).passwordGrant).toBe('clients');
    expect(configFrom([], { TOKENBELL_PASSWORD_GRANT: 'off' }).passwordGrant).toBe('off');
  });

  it('refuses anything else in one line naming the flag and the choices', () => {
    expect(() => configFrom(['--password-grant', 'sometimes'], {})).toThrow('--password-grant must be any, clients or off, got "sometimes"');
  });
});
