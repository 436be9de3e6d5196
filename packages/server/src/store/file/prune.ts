// What the file store drops because it can never be used again, and when: a retention policy over the store's
// collections, apart from the Store's own mechanics, which it uses only through `remove`.
import { limits } from '../../config.js';
import type { PruneResult } from '../../domain/storage/index.js';
import type { Store } from './store.js';

/**
 * Drops what can never be used again (inside `commit`): unanswered device authorizations at expiry, authorization
 * codes and answered device authorizations past expiry, and access tokens past revocation or expiry whose refresh
 * token is unusable too, each by more than the grace
 * (`limits.pruneGraceSeconds`), which keeps records around for error messages and replay detection; expired sessions;
 * and notification mail past its retention.
 */
export function pruneRecords(store: Store, nowSeconds: number): PruneResult {
  const cutoff = nowSeconds - limits.pruneGraceSeconds;
  return {
    authorizationCodes: store.remove('authorization_codes', (c) => c.expires_at < cutoff).length,
    // One nobody answered is of no use past its expiry (its device hears expired_token or, pruned, invalid_grant): kept
    // no longer, so that a flood of unanswered ones costs nothing for long.
    deviceGrants: store.remove('device_grants', (g) => (g.decision === null ? g.expires_at <= nowSeconds : g.expires_at < cutoff)).length,
    accessTokens: store.remove('access_tokens', (t) =>
      // Revoking a record revokes its refresh token as well; otherwise a refresh token lives until used.
      t.revoked_at !== null ? t.revoked_at < cutoff : t.refresh_digest === null && t.created_at + t.expires_in < cutoff,
    ).length,
    sessions: store.remove('sessions', (s) => s.expires_at <= nowSeconds).length,
    notificationMessages: pruneMail(store, nowSeconds - limits.mailRetentionSeconds),
  };
}

/** Messages delivered or given up before `cutoff`, and the events of that age left without a message. */
function pruneMail(store: Store, cutoff: number): number {
  const removed = store.remove('outbox', (m) => m.status !== 'queued' && m.created_at < cutoff).length;
  if (removed > 0) {
    const kept = new Set(store.data.outbox.map((m) => m.event_id));
    store.remove('notification_events', (e) => e.created_at < cutoff && !kept.has(e.id));
  }
  return removed;
}

/** Prunes in a commit of its own; the HTTP layer schedules this. */
export function pruneStore(store: Store, nowSeconds = Math.floor(Date.now() / 1000)): Promise<PruneResult> {
  return store.commit(() => store.prune(nowSeconds));
}
