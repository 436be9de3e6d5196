// Device authorizations (domain/storage/device-grants.ts) in the file store's `device_grants` collection. Answering
// and polling each decide and write in one synchronous commit, so no other request runs between the check and the
// write: one answer and one redeeming poll win.
import {
  refusal,
  type DeviceAnswer,
  type DeviceAnswerOutcome,
  type DeviceGrantRecord,
  type DeviceGrantStorage,
  type DevicePollOutcome,
  type DevicePollStep,
  type NewTokenPair,
  type StoredDeviceGrant,
  type UserStanding,
} from '../../domain/storage/index.js';
import { tokenRecordOf } from './grants.js';
import type { Store } from './store.js';

export function fileDeviceGrantStorage(store: Store): DeviceGrantStorage {
  const standingOf = (userId: number | null): UserStanding => {
    const user = userId === null ? undefined : store.lookup('users', 'id', userId);
    return user && { state: user.state };
  };
  return {
    async create(grant) {
      await store.commit(() => {
        if (store.lookup('device_grants', 'user_code_digest', grant.user_code_digest) || store.lookup('device_grants', 'device_code_digest', grant.device_code_digest)) {
          throw refusal.userCode();
        }
        store.insert('device_grants', { ...grant, scopes: [...grant.scopes] });
      });
    },
    async pendingCount(applicationId, now) {
      return store.data.device_grants.filter((g) => g.application_id === applicationId && g.decision === null && g.expires_at > now).length;
    },
    async byUserCode(userCodeDigest) {
      return store.lookup('device_grants', 'user_code_digest', userCodeDigest);
    },
    answer<E>(userCodeDigest: string, check: (grant: DeviceGrantRecord) => E | undefined, answer: DeviceAnswer, now: number) {
      return store.commit((): DeviceAnswerOutcome<E> => {
        const grant = store.lookup('device_grants', 'user_code_digest', userCodeDigest);
        if (!grant) return { outcome: 'unknown' };
        const reason = check(grant);
        if (reason !== undefined) return { outcome: 'refused', reason };
        const next = store.update('device_grants', grant, { decision: answer.decision, user_id: answer.user_id, auth_time: answer.auth_time, decided_at: now });
        return { outcome: 'answered', grant: next };
      });
    },
    poll<E>(deviceCodeDigest: string, applicationId: number, judge: (grant: StoredDeviceGrant) => DevicePollStep<E>, pair: (grant: StoredDeviceGrant) => NewTokenPair, now: number) {
      return store.commit((): DevicePollOutcome<E> => {
        const grant = store.lookup('device_grants', 'device_code_digest', deviceCodeDigest);
        if (!grant || grant.application_id !== applicationId || grant.redeemed_at !== null) return { outcome: 'unknown' };
        const stored = { ...grant, user: standingOf(grant.user_id) };
        const step = judge(stored);
        if (step.step === 'refuse') return { outcome: 'refused', reason: step.reason };
        if (step.step === 'wait') {
          store.update('device_grants', grant, { last_polled_at: now });
          return { outcome: 'refused', reason: step.reason };
        }
        store.update('device_grants', grant, { redeemed_at: now });
        // The pair starts a chain of its own, named by the device authorization, as a code's pair is by the code.
        store.insert('access_tokens', tokenRecordOf(pair(stored), grant.id));
        return { outcome: 'issued' };
      });
    },
  };
}
