import { describe, expect, it } from 'vitest';
import { ConfigError, configFrom, configWarnings } from '../src/config.js';

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
