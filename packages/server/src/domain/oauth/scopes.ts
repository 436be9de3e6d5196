// What a scope grants is the document's (the `oauth2` scheme's `x-scope-includes`): api includes read_api, which
// includes read_user, and the service's Git and registry scopes; the rest, OpenID Connect's among them, include
// nothing but themselves. The closure is taken once here, so a check is one lookup.
import { InputError } from '../../explained-error.js';
import { scopes as knownScopes, scopeIncludes } from '../../openapi/document.js';
import type { Scope } from '../storage/records.js';

function closure(scope: Scope, seen = new Set<Scope>()): Set<Scope> {
  if (seen.has(scope)) return seen;
  seen.add(scope);
  for (const included of scopeIncludes[scope] ?? []) closure(included, seen);
  return seen;
}

const includes: ReadonlyMap<Scope, ReadonlySet<Scope>> = new Map(knownScopes.map((scope) => [scope, closure(scope)]));

export function isScope(value: string): value is Scope {
  return (knownScopes as readonly string[]).includes(value);
}

/** Whether tokens granted `granted` may do what needs `required`. */
export function satisfies(granted: readonly Scope[], required: Scope): boolean {
  return granted.some((g) => includes.get(g)?.has(required));
}

/** Parses a space-separated scope parameter; undefined when any scope is unknown. */
export function parseScope(param: string): Scope[] | undefined {
  const list = [...new Set(param.split(' ').filter(Boolean))];
  return list.every(isScope) ? list : undefined;
}

/**
 * Narrows a requested scope parameter within what is allowed (RFC 6749 sections 3.3 and 6): every requested scope
 * must be allowed or included in an allowed one. Absent or blank means `byDefault`. Undefined when the request
 * names an unknown scope or one beyond what is allowed.
 */
export function narrowScope(requested: string | undefined, allowed: readonly Scope[], byDefault: readonly Scope[] = allowed): Scope[] | undefined {
  if (requested === undefined || requested.trim() === '') return [...byDefault];
  const list = parseScope(requested);
  return list && list.every((s) => satisfies(allowed, s)) ? list : undefined;
}

/**
 * A list of scopes a user chose, without repeats; throws InputError. An application may have any scope; a personal
 * access token only those of the API (`among`).
 */
export function checkScopes<S extends Scope = Scope>(value: unknown, among: readonly S[] = knownScopes as readonly S[]): S[] {
  if (!Array.isArray(value) || value.length === 0) throw new InputError('scopes', 'must name at least one scope');
  for (const scope of value) {
    if (typeof scope !== 'string' || !among.includes(scope as S)) {
      throw new InputError('scopes', `unknown scope ${JSON.stringify(scope)}; known scopes: ${among.join(', ')}`);
    }
  }
  return [...new Set(value as S[])];
}

export const formatScope = (list: readonly Scope[]) => list.join(' ');
