// Personal access tokens (domain/storage/tokens.ts) on PostgreSQL: every API call with one finds it with its user's
// account, in one batched statement (credentials.ts); create shares its insert with a seed (inserts.ts).
import type pg from 'pg';
import type { PersonalAccessTokenStorage } from '../../domain/storage/index.js';
import { credentialWithAccount } from './credentials.js';
import { insertPersonalAccessToken } from './inserts.js';
import { isId, personalAccessTokenColumns, personalAccessTokenOf, type PersonalAccessTokenRow } from './rows.js';
import type { Writes } from './writes.js';

export function postgresPersonalAccessTokenStorage(pool: pg.Pool, { observed, write }: Writes): PersonalAccessTokenStorage {
  return {
    // row_to_json writes the expiry date as the day itself (ISO 8601), as personalAccessTokenColumns does.
    withUserByDigest: credentialWithAccount(pool, 'personal_access_tokens', personalAccessTokenOf),
    async ofUser(userId) {
      if (!isId(userId)) return [];
      const { rows } = await pool.query<PersonalAccessTokenRow>(`SELECT ${personalAccessTokenColumns} FROM personal_access_tokens WHERE user_id = $1 ORDER BY id DESC`, [userId]);
      return rows.map(personalAccessTokenOf);
    },
    create(token) {
      return observed(() => insertPersonalAccessToken(pool, token));
    },
    async revokeOwned(userId, id) {
      if (!isId(userId) || !isId(id)) return null;
      const { rows } = await write<PersonalAccessTokenRow>(`UPDATE personal_access_tokens SET revoked = true WHERE id = $1 AND user_id = $2 RETURNING ${personalAccessTokenColumns}`, [id, userId]);
      return rows[0] ? personalAccessTokenOf(rows[0]) : null;
    },
  };
}
