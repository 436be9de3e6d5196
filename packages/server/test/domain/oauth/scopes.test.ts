import { describe, expect, it } from 'vitest';
import { checkScopes, narrowScope, parseScope, satisfies } from '../../../src/domain/oauth/scopes.js';
import { InputError } from '../../../src/explained-error.js';
import { administratorScopes, apiScopes, document, scopes } from '../../../src/openapi/document.js';

describe('satisfies: api ⊇ read_api ⊇ read_user', () => {
  it.each([
    [['api'], 'read_user', true],
    [['api'], 'read_api', true],
    [['read_api'], 'read_user', true],
    [['read_api'], 'api', false],
    [['read_user'], 'read_api', false],
    [['read_user', 'read_api'], 'api', false],
    // The service's api grants Git and registry access; write_repository grants read_repository.
    [['api'], 'read_repository', true],
    [['api'], 'write_registry', true],
    [['write_repository'], 'read_repository', true],
    [['read_repository'], 'write_repository', false],
    // Scopes outside the API grant none of it.
    [['read_repository'], 'read_user', false],
    [['write_repository', 'read_registry', 'k8s_proxy', 'ai_features', 'openid'], 'read_user', false],
    [['sudo'], 'read_user', false],
    [['api'], 'sudo', false],
    [['api'], 'openid', false],
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
    expect(narrowScope('read_repository write_repository', ['api'])).toEqual(['read_repository', 'write_repository']);
    expect(narrowScope('write_repository', ['read_repository'])).toBeUndefined();
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
    expect(() => checkScopes(['admin'])).toThrow(/unknown scope "admin"; known scopes: api, read_api, read_user, create_runner, /);
    expect(() => checkScopes('api')).toThrow(/at least one scope/);
  });
});

describe('the catalogue, stated once in the document', () => {
  const scheme = document.components.securitySchemes.oauth2;

  it('describes every scope in each flow, and no other', () => {
    for (const flow of Object.values<{ scopes: Record<string, string> }>(scheme.flows)) expect(Object.keys(flow.scopes)).toEqual([...scopes]);
    expect(scopes).toEqual(expect.arrayContaining(['read_repository', 'write_repository', 'sudo', 'admin_mode', 'k8s_proxy', 'read_virtual_registry']));
  });

  it('names only known scopes in what a scope includes and in the administrators\' scopes', () => {
    for (const [scope, included] of Object.entries<string[]>(scheme['x-scope-includes'])) {
      expect(scopes).toContain(scope);
      for (const s of included) expect(scopes).toContain(s);
    }
    for (const s of administratorScopes) expect(apiScopes).toContain(s);
    expect(apiScopes.filter((s) => !scopes.includes(s))).toEqual([]);
    expect(scopes.filter((s) => !(apiScopes as readonly string[]).includes(s))).toEqual(['openid', 'profile', 'email']);
  });
});
