// A credential found by its digest with its user's account (the user and their global notification setting) in one
// statement: every API call asks it, for an OAuth access token or a personal access token alike.
import type pg from 'pg';
import type { Account } from '../../domain/storage/index.js';
import type { Ask } from './batch.js';
import { byKey, eachAsk, lookup } from './lookups.js';
import { settingOf, type SettingRow } from './notification-settings.js';
import { secondaryEmailsOf, userOf, type UserRow } from './rows.js';

/**
 * Credentials found by their digests, each with its user and their global setting in one JSON value: `credential` is
 * the credential's table, aliased `c` (both kinds have a unique `token_digest`).
 */
const credentialsLookup = (credential: string) =>
  eachAsk(
    `json_build_object('credential', row_to_json(c), 'owner', row_to_json(u), 'owner_secondary_emails', ${secondaryEmailsOf('u')}, 'global', row_to_json(g)) AS found`,
    `${credential} c JOIN users u ON u.id = c.user_id
     LEFT JOIN notification_settings g ON g.user_id = u.id AND g.source_type = 'global' AND coalesce(g.source_id, 0) = 0`,
    'c.token_digest = q.key',
  );
interface FoundCredential<R> {
  key: string;
  found: { credential: R; owner: Omit<UserRow, 'secondary_emails'>; owner_secondary_emails: string[]; global: SettingRow | null };
}
function accountOf({ owner, owner_secondary_emails, global }: FoundCredential<unknown>['found']): Account {
  return { user: userOf({ ...owner, secondary_emails: owner_secondary_emails }), globalSetting: global === null ? undefined : settingOf(global) };
}

/** The credential of `table` with this digest, `convert`ed, and its user's account, by a batched lookup. */
export function credentialWithAccount<R, T>(pool: pg.Pool, table: string, convert: (row: R) => T) {
  const find = lookup<Ask, FoundCredential<R>>(pool, credentialsLookup(table), ['key'], ['text'], (ask) => [ask.key]);
  return byKey(find, (row): { token: T } & Account => ({ token: convert(row.found.credential), ...accountOf(row.found) }));
}
