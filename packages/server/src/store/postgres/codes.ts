// Authorization codes (domain/storage/tokens.ts) on PostgreSQL: stored here, and only stored: the token endpoint
// redeems them under row locks (grants.ts), revoking an authorization drops them (tokens.ts), and pruning the
// expired ones is maintenance's (maintenance.ts).
import type { AuthorizationCodeRecord, AuthorizationCodeStorage } from '../../domain/storage/index.js';
import { at, atOrNull } from './rows.js';
import type { Writes } from './writes.js';

export function postgresAuthorizationCodeStorage({ write }: Writes): AuthorizationCodeStorage {
  return {
    async create(code: AuthorizationCodeRecord) {
      await write(
        `INSERT INTO authorization_codes (id, code_digest, application_id, user_id, redirect_uri, scopes, code_challenge, code_challenge_method, created_at, expires_at, used_at, nonce, auth_time)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
        [
          code.id,
          code.code_digest,
          code.application_id,
          code.user_id,
          code.redirect_uri,
          [...code.scopes],
          code.code_challenge,
          code.code_challenge_method,
          at(code.created_at),
          at(code.expires_at),
          code.used_at === null ? null : at(code.used_at),
          code.nonce ?? null,
          atOrNull(code.auth_time),
        ],
      );
    },
  };
}
