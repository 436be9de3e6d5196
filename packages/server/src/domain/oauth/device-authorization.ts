// The device authorization grant (RFC 8628) apart from the token endpoint: the device authorization endpoint
// (sections 3.1-3.2), the user's side on the verification page (section 3.3), and what a poll is answered (section
// 3.5), which the token endpoint's device grant applies inside the store's poll (token-endpoint.ts).
import { nanoid } from 'nanoid';
import type { components } from '@tokenbell/sdk';
import type { DevicePollStep, Storage, StoredDeviceGrant } from '../storage/index.js';
import type { ApplicationRecord, DeviceGrantRecord, EpochSeconds } from '../storage/records.js';
import { InputError } from '../../explained-error.js';
import { digest, newSecret, newUserCode } from '../secrets.js';
import { LoginThrottledError } from '../login-throttle.js';
import { isActive } from '../users.js';
import { OAuthError, invalidGrant } from './errors.js';
import { narrowScope } from './scopes.js';

type Schemas = components['schemas'];

export interface DeviceAuthorizationSettings {
  /** The instance's base URL: the verification page is `<baseUrl>/oauth/device`. */
  baseUrl: string;
  now: EpochSeconds;
  /** How long both codes live (section 3.2 `expires_in`). */
  expiresIn: number;
  /** The least number of seconds between two polls (section 3.2 `interval`). */
  interval: number;
  /** How many of one client's device authorizations may wait for an answer at once. */
  pendingPerClient: number;
  /** The test kit's automatic approval: the user who approves every new device authorization at once, if any. */
  approvedBy?: string | null;
}

/**
 * The user code as typed, normalised: upper case, without the spaces and hyphens people type or copy along with it
 * (section 6.1); undefined when what is left cannot be a user code, so that it need not be looked up.
 */
export function normaliseUserCode(typed: string): string | undefined {
  const code = typed.replace(/[\s-]+/g, '').toUpperCase();
  return /^[0-9A-Z]{8}$/.test(code) ? code : undefined;
}

/** The user code as the pages show it, in two halves that are easier to read and compare: `WDJB-MJHT`. */
export const displayUserCode = (code: string) => `${code.slice(0, 4)}-${code.slice(4)}`;

const invalidScope = () => new OAuthError('invalid_scope', 'The requested scope is invalid, unknown, malformed, or exceeds the scope granted.');

/** Tries again when a new user code is taken already, which is rare (36^8 codes) but not impossible. */
const attemptsForAFreeUserCode = 5;

/**
 * Sections 3.1-3.2: the client (authenticated, or a public one by its client_id) asks for a device code and a user
 * code. Both are stored as digests only; the device code is a secret as long as the others, the user code short enough
 * to type. With automatic approval on, the named user approves it at once.
 */
export async function startDeviceAuthorization(
  storage: Storage,
  client: ApplicationRecord,
  params: Pick<Schemas['DeviceAuthorizationRequest'], 'scope'>,
  settings: DeviceAuthorizationSettings,
): Promise<Schemas['DeviceAuthorizationResponse']> {
  const scopes = narrowScope(params.scope, client.scopes);
  if (!scopes) throw invalidScope();
  const { now } = settings;
  // Checked before storing rather than with it: concurrent requests may pass it together, by as many as they are.
  if ((await storage.deviceGrants.pendingCount(client.id, now)) >= settings.pendingPerClient) {
    throw new LoginThrottledError(settings.interval * 12, 'device authorizations waiting for an answer for this application');
  }
  const approver = settings.approvedBy ? await storage.users.byUsername(settings.approvedBy) : undefined;
  const approved = isActive(approver) ? { decision: 'approved' as const, user_id: approver.id, decided_at: now, auth_time: now } : { decision: null, user_id: null, decided_at: null, auth_time: null };
  for (let attempt = 1; ; attempt++) {
    const device_code = newSecret('deviceCode');
    const user_code = newUserCode();
    const grant: DeviceGrantRecord = {
      id: nanoid(),
      device_code_digest: digest(device_code),
      user_code_digest: digest(user_code),
      application_id: client.id,
      scopes,
      created_at: now,
      expires_at: now + settings.expiresIn,
      interval: settings.interval,
      last_polled_at: null,
      redeemed_at: null,
      ...approved,
    };
    try {
      await storage.deviceGrants.create(grant);
    } catch (error) {
      if (error instanceof InputError && error.code === 'taken' && attempt < attemptsForAFreeUserCode) continue;
      throw error;
    }
    const verification_uri = `${settings.baseUrl}/oauth/device`;
    return {
      device_code,
      user_code,
      verification_uri,
      verification_uri_complete: `${verification_uri}?user_code=${user_code}`,
      expires_in: settings.expiresIn,
      interval: settings.interval,
    };
  }
}

/** Why a typed code cannot be answered: no such code, past its time, or answered already. */
export type UnanswerableCode = 'unknown' | 'expired' | 'answered';

export type DeviceLookup =
  | { outcome: 'pending'; userCode: string; application: ApplicationRecord; scopes: DeviceGrantRecord['scopes'] }
  | { outcome: UnanswerableCode };

const unanswerable = (grant: DeviceGrantRecord, now: EpochSeconds): UnanswerableCode | undefined => {
  if (grant.decision !== null) return 'answered';
  return now >= grant.expires_at ? 'expired' : undefined;
};

/** Section 3.3: the device authorization a user typed the code of, to show them who asks for what before they answer. */
export async function lookUpDeviceAuthorization(storage: Storage, typed: string, now: EpochSeconds): Promise<DeviceLookup> {
  const userCode = normaliseUserCode(typed);
  const grant = userCode === undefined ? undefined : await storage.deviceGrants.byUserCode(digest(userCode));
  if (!grant) return { outcome: 'unknown' };
  const problem = unanswerable(grant, now);
  if (problem) return { outcome: problem };
  const application = await storage.applications.byId(grant.application_id);
  if (!application) return { outcome: 'unknown' };
  return { outcome: 'pending', userCode: userCode!, application, scopes: grant.scopes };
}

export interface DeviceDecision {
  user_id: number;
  decision: 'approve' | 'deny';
  /** When the user signed in (their session's sign-in), for an approval. */
  auth_time: EpochSeconds | null;
}

export type AnsweredDevice =
  | { outcome: 'recorded'; application: ApplicationRecord; scopes: DeviceGrantRecord['scopes']; decision: DeviceDecision['decision'] }
  | { outcome: UnanswerableCode };

/**
 * Section 3.3: the user's answer. One answer wins, in the store, whatever answers race for the code (two tabs, two
 * users with one code): the others find it answered.
 */
export async function answerDeviceAuthorization(storage: Storage, typed: string, decision: DeviceDecision, now: EpochSeconds): Promise<AnsweredDevice> {
  const userCode = normaliseUserCode(typed);
  if (userCode === undefined) return { outcome: 'unknown' };
  const answered = await storage.deviceGrants.answer(
    digest(userCode),
    (grant) => unanswerable(grant, now),
    { decision: decision.decision === 'approve' ? 'approved' : 'denied', user_id: decision.user_id, auth_time: decision.decision === 'approve' ? decision.auth_time : null },
    now,
  );
  if (answered.outcome !== 'answered') return { outcome: answered.outcome === 'refused' ? answered.reason : 'unknown' };
  const application = await storage.applications.byId(answered.grant.application_id);
  // Deleting the application takes its device authorizations with it: one answered here has just lost the race.
  if (!application) return { outcome: 'unknown' };
  return { outcome: 'recorded', application, scopes: answered.grant.scopes, decision: decision.decision };
}

const pollAnswers = {
  pending: () => new OAuthError('authorization_pending', 'The user has not yet approved or denied the request; keep polling at the interval.'),
  slowDown: () => new OAuthError('slow_down', 'The device polled too often; add 5 seconds to the polling interval.'),
  denied: () => new OAuthError('access_denied', 'The user denied the request.'),
  expired: () => new OAuthError('expired_token', 'The device code has expired; start a new device authorization.'),
};

/**
 * Section 3.5: what a poll of a device authorization not yet redeemed is answered. Expired first, whatever the user
 * did (the code is dead); then the user's answer; while there is none, `slow_down` (a variant of
 * `authorization_pending`, section 3.5) for a poll sooner than `interval` after the last one told to wait, which does
 * not count as a poll itself: a device that polls too fast is not kept waiting longer for it.
 */
export function pollStep(grant: StoredDeviceGrant, now: EpochSeconds): DevicePollStep<OAuthError> {
  const refuse = (reason: OAuthError) => ({ step: 'refuse' as const, reason });
  if (now >= grant.expires_at) return refuse(pollAnswers.expired());
  if (grant.decision === 'denied') return refuse(pollAnswers.denied());
  // A user blocked since approving cannot be acted for, as for a code (token-endpoint.ts).
  if (grant.decision === 'approved') return isActive(grant.user) ? { step: 'redeem' } : refuse(invalidGrant());
  if (grant.last_polled_at !== null && now - grant.last_polled_at < grant.interval) return refuse(pollAnswers.slowDown());
  return { step: 'wait', reason: pollAnswers.pending() };
}
