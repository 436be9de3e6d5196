// Accounts (domain/storage/users.ts) on PostgreSQL: a user by id is asked by nearly every request, so it is a
// batched lookup; the rest are single statements, and create shares its insert with a seed (inserts.ts).
import type pg from 'pg';
import type { EpochSeconds, UserDeletion, UserStorage } from '../../domain/storage/index.js';
import { insertUser } from './inserts.js';
import { byId, one } from './lookups.js';
import { at, isId, isText, userColumns, userOf, type UserRow } from './rows.js';
import { revokeTwice } from './tokens.js';
import type { Writes } from './writes.js';

export function postgresUserStorage(pool: pg.Pool, { inTransaction, write }: Writes): UserStorage {
  async function update(id: number, set: string, values: unknown[]) {
    if (!isId(id)) return undefined;
    const { rows } = await write<UserRow>(`UPDATE users SET ${set} WHERE id = $1 RETURNING ${userColumns}`, [id, ...values]);
    return rows[0] && userOf(rows[0]);
  }
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
    async replaceVerifiedPasswordHash(id, verified, rehashed) {
      if (!isId(id)) return false;
      const result = await write('UPDATE users SET password_hash = $3 WHERE id = $1 AND password_hash = $2', [id, verified, rehashed]);
      return result.rowCount === 1;
    },
    async all() {
      const { rows } = await pool.query<UserRow>(`SELECT ${userColumns} FROM users ORDER BY id`);
      return rows.map(userOf);
    },
    setState(id, state) {
      return update(id, 'state = $2', [state]);
    },
    setAdmin(id, isAdmin) {
      return update(id, 'is_admin = $2', [isAdmin]);
    },
    setOtpSecret(id, otpSecret) {
      return update(id, 'two_factor_enabled = $2::text IS NOT NULL, otp_secret = $2, otp_last_step = NULL', [otpSecret]);
    },
    async delete(id, now) {
      if (!isId(id)) return undefined;
      return inTransaction((client) => deleteUser(client, id, now));
    },
    async spendOtpStep(id, step) {
      if (!isId(id)) return false;
      const result = await write(`UPDATE users SET otp_last_step = $2 WHERE id = $1 AND state = 'active' AND (otp_last_step IS NULL OR otp_last_step < $2)`, [id, step]);
      return result.rowCount === 1;
    },
  };
}

/**
 * The user and what is theirs: the foreign keys (ON DELETE CASCADE) take their tokens, codes, device authorizations,
 * memberships, settings, mail, events and applications; what no key ties to them is taken here. The file store takes
 * the same records (store/file/users.ts).
 */
async function deleteUser(client: pg.PoolClient, id: number, now: EpochSeconds): Promise<UserDeletion | undefined> {
  // The row locked first: a membership or application added meanwhile waits for this transaction.
  const { rows: found } = await client.query<{ username: string }>('SELECT username FROM users WHERE id = $1 FOR UPDATE', [id]);
  if (found.length === 0) return undefined;
  const { rows: sole } = await client.query<{ path: string }>(
    `SELECT groups.path FROM group_members m JOIN groups ON groups.id = m.group_id
     WHERE m.user_id = $1 AND m.access_level = 50
       AND NOT EXISTS (SELECT 1 FROM group_members o WHERE o.group_id = m.group_id AND o.user_id <> $1 AND o.access_level = 50)
     ORDER BY groups.path`,
    [id],
  );
  if (sole.length > 0) return { deleted: false, soleOwnerOf: sole.map((row) => row.path) };
  // access_tokens.application_id has no foreign key (a deleted application's tokens stay, revoked, until pruned).
  await revokeTwice(client, 'UPDATE access_tokens SET revoked_at = $2 WHERE application_id IN (SELECT id FROM applications WHERE owner_id = $1) AND revoked_at IS NULL', [id, at(now)]);
  // A personal project is tied to its user by name only, and a setting to its project by id only.
  const personal = `SELECT id FROM projects WHERE group_id IS NULL AND lower(namespace) = lower($1)`;
  await client.query(`DELETE FROM notification_settings WHERE source_type = 'project' AND source_id IN (${personal})`, [found[0]!.username]);
  await client.query(`DELETE FROM projects WHERE id IN (${personal})`, [found[0]!.username]);
  await client.query('DELETE FROM users WHERE id = $1', [id]);
  return { deleted: true };
}
