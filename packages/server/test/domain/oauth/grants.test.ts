import { describe, expect, it } from 'vitest';
import { OAuthError } from '../../../src/domain/oauth/errors.js';
import { grantRegistry } from '../../../src/domain/oauth/grants.js';

const deviceCode = 'urn:ietf:params:oauth:grant-type:device_code';

describe('grantRegistry', () => {
  it('serves every grant of the document with --password-grant any, the password grant without a client', () => {
    const grants = grantRegistry('any');
    expect(grants.enabled).toEqual(['authorization_code', 'password', 'refresh_token', deviceCode]);
    expect(grants.clientRequired('password')).toBe(false);
    expect(grants.clientRequired('authorization_code')).toBe(true);
    expect(grants.clientRequired('refresh_token')).toBe(true);
    expect(grants.clientRequired(deviceCode)).toBe(true);
    expect(['authorization_code', 'refresh_token', 'password', deviceCode].map((g) => grants.publicClientsAllowed(g))).toEqual([true, true, false, true]);
  });

  it('asks the password grant for a client with clients, and drops it with off', () => {
    expect(grantRegistry('clients').clientRequired('password')).toBe(true);
    const off = grantRegistry('off');
    expect(off.enabled).toEqual(['authorization_code', 'refresh_token', deviceCode]);
    expect(() => off.assertServed('password')).toThrow(OAuthError);
    expect(() => off.assertServed('password')).toThrow(`use one of authorization_code, refresh_token, ${deviceCode}.`);
    expect(() => off.assertServed('refresh_token')).not.toThrow();
    // The device grant is not the password grant's: the setting leaves it as it is.
    for (const setting of ['clients', 'off'] as const) {
      expect(() => grantRegistry(setting).assertServed(deviceCode)).not.toThrow();
      expect(grantRegistry(setting).publicClientsAllowed(deviceCode)).toBe(true);
    }
  });
});
