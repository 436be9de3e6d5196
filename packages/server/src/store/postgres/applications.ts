// OAuth applications (domain/storage/applications.ts) on PostgreSQL: every token request authenticates its client,
// so an application by id or App ID is a batched lookup; create shares its insert with a seed (inserts.ts).
import type pg from 'pg';
import type { ApplicationStorage } from '../../domain/storage/index.js';
import { insertApplication } from './inserts.js';
import { byId, byText } from './lookups.js';
import { applicationColumns, applicationOf, type ApplicationRow, at, isId } from './rows.js';
import { revokeTwice } from './tokens.js';
import type { Writes } from './writes.js';

export function postgresApplicationStorage(pool: pg.Pool, { observed, inTransaction }: Writes): ApplicationStorage {
  return {
    byId: byId(pool, applicationColumns, 'applications', applicationOf),
    byUid: byText(pool, applicationColumns, 'applications', 'uid', applicationOf),
    async ownedBy(ownerId) {
      if (!isId(ownerId)) return [];
      const { rows } = await pool.query<ApplicationRow>(`SELECT ${applicationColumns} FROM applications WHERE owner_id = $1 ORDER BY id`, [ownerId]);
      return rows.map(applicationOf);
    },
    create(application) {
      return observed(() => insertApplication(pool, application));
    },
    async deleteOwned(ownerId, id, now) {
      if (!isId(ownerId) || !isId(id)) return false;
      return inTransaction(async (client) => {
        // Its authorization codes go with it (ON DELETE CASCADE), after any redemption in flight has committed.
        const deleted = await client.query('DELETE FROM applications WHERE id = $1 AND owner_id = $2', [id, ownerId]);
        if (deleted.rowCount === 0) return false;
        await revokeTwice(client, 'UPDATE access_tokens SET revoked_at = $2 WHERE application_id = $1 AND revoked_at IS NULL', [id, at(now)]);
        return true;
      });
    },
  };
}
