// The token endpoint's grants, in one registry (as node-oidc-provider keeps one): which grant types this instance
// serves, and whether a grant's request must authenticate its client. The password grant is the operator's choice:
// `any` (the spec: with or without client credentials), `clients` (only authenticated clients) or `off`.
import { grantTypes } from '../../openapi/document.js';
import { OAuthError } from './errors.js';

export const passwordGrantSettings = ['any', 'clients', 'off'] as const;
export type PasswordGrantSetting = (typeof passwordGrantSettings)[number];

export interface GrantRegistry {
  /** The grant types served, in the document's order: what the server metadata lists. */
  readonly enabled: readonly string[];
  /** Whether a request for this grant must authenticate its client (RFC 6749 sections 3.2.1, 4.1.3, 6). */
  clientRequired(grantType: string): boolean;
  /**
   * Whether a public client (client_id alone) may use this grant. Not the password grant: a client that cannot keep
   * a secret is no client to trust with a user's password (RFC 9700 section 2.4 forbids the grant outright).
   */
  publicClientsAllowed(grantType: string): boolean;
  /** Throws unsupported_grant_type (RFC 6749 section 5.2), naming what is served, unless the grant is served. */
  assertServed(grantType: string): void;
}

export function grantRegistry(passwordGrant: PasswordGrantSetting = 'any'): GrantRegistry {
  const enabled = grantTypes.filter((type) => type !== 'password' || passwordGrant !== 'off');
  return {
    enabled,
    clientRequired: (grantType) => grantType !== 'password' || passwordGrant === 'clients',
    publicClientsAllowed: (grantType) => grantType !== 'password',
    assertServed(grantType) {
      if (!enabled.includes(grantType)) {
        throw new OAuthError('unsupported_grant_type', `The grant type "${grantType}" is not supported; use one of ${enabled.join(', ')}.`);
      }
    },
  };
}
