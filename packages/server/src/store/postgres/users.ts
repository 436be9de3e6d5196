// Accounts (domain/storage/users.ts) on PostgreSQL: a user by id is asked by nearly every request, so it is a
// batched lookup; the rest are single statements, and create shares its insert with a seed (inserts.ts).
import type pg from 'pg';
import type { UserStorage } from '../../domain/storage/index.js';
import { insertUser } from './inserts.js';
import { byId, one } from './lookups.js';
import { isId, isText, userColumns, userOf, type UserRow } from './rows.js';
import type { Writes } from './writes.js';

export function postgresUserStorage(pool: pg.Pool, { inTransaction, write }: Writes): UserStorage {
  return {
    byId: byId(pool, userColumns, 'users', userOf),
    async byUsername(username) {
      if (!isText(username)) return undefined;
      return one(pool, `SELECT ${userColumns} FROM users WHERE lower(username) = lower($1)`, [username], userOf);
    },
    async byLogin(login) {
      if (!isText(login)) return undefined;
      // A username wins over another user's e-mail address of the same spelling, as in the file store.
      return one(
        pool,
        `SELECT ${userColumns} FROM users WHERE lower(username) = lower($1) OR lower(email) = lower($1)
         ORDER BY lower(username) = lower($1) DESC LIMIT 1`,
        [login],
        userOf,
      );
    },
    async any() {
      const { rows } = await pool.query<{ any: boolean }>('SELECT EXISTS (SELECT 1 FROM users) AS any');
      return rows[0]!.any;
    },
    create(user) {
      return inTransaction((client) => insertUser(client, user, 'create'));
    },
    async setPasswordHash(id, passwordHash) {
      if (!isId(id)) return undefined;
      const { rows } = await write<UserRow>(`UPDATE users SET password_hash = $2 WHERE id = $1 RETURNING ${userColumns}`, [id, passwordHash]);
      return rows[0] && userOf(rows[0]);
    },
    async spendOtpStep(id, step) {
      if (!isId(id)) return false;
      const result = await write(`UPDATE users SET otp_last_step = $2 WHERE id = $1 AND state = 'active' AND (otp_last_step IS NULL OR otp_last_step < $2)`, [id, step]);
      return result.rowCount === 1;
    },
  };
}
