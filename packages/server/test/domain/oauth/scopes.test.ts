import { describe, expect, it } from 'vitest';
import { checkScopes, narrowScope, parseScope, satisfies } from '../../../src/domain/oauth/scopes.js';
import { InputError } from '../../../src/explained-error.js';

describe('satisfies: api ⊇ read_api ⊇ read_user', () => {
  it.each([
    [['api'], 'read_user', true],
    [['api'], 'read_api', true],
    [['read_api'], 'read_user', true],
    [['read_api'], 'api', false],
    [['read_user'], 'read_api', false],
    [['read_user', 'read_api'], 'api', false],
  ] as const)('%j grants %s: %s', (granted, required, expected) => {
    expect(satisfies(granted, required)).toBe(expected);
  });
});

describe('narrowScope', () => {
  it('answers the default for an absent or blank request', () => {
    expect(narrowScope(undefined, ['api', 'read_user'], ['api'])).toEqual(['api']);
    expect(narrowScope('  ', ['read_api'])).toEqual(['read_api']);
  });

  it('narrows along the hierarchy, never widens, and refuses unknown scopes', () => {
    expect(narrowScope('read_user', ['read_api'])).toEqual(['read_user']);
    expect(narrowScope('read_api read_user read_api', ['api'])).toEqual(['read_api', 'read_user']);
    expect(narrowScope('api', ['read_api'])).toBeUndefined();
    expect(narrowScope('sudo', ['api'])).toBeUndefined();
  });

  it('parses a space-separated parameter without repeats', () => {
    expect(parseScope('api  api read_user')).toEqual(['api', 'read_user']);
    expect(parseScope('api write')).toBeUndefined();
  });
});

describe('checkScopes', () => {
  it('answers the scopes without repeats and refuses an empty list or an unknown scope with an InputError', () => {
    expect(checkScopes(['read_api', 'read_api', 'api'])).toEqual(['read_api', 'api']);
    expect(() => checkScopes([])).toThrow(InputError);
    expect(() => checkScopes(['admin'])).toThrow(/unknown scope "admin"; known scopes: api, read_api, read_user/);
    expect(() => checkScopes('api')).toThrow(/at least one scope/);
  });
});
