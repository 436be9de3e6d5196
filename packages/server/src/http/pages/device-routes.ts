// The device verification pages (RFC 8628 section 3.3), at the service's paths: the code form, the confirmation, and
// the answer. Every code a user submits counts in the throttle of wrong codes (login-throttle.ts checkUserCode).
import type { components } from '@tokenbell/sdk';
import { Router, type Request } from 'express';
import {
  answerDeviceAuthorization,
  displayUserCode,
  lookUpDeviceAuthorization,
  normaliseUserCode,
  type UnanswerableCode,
} from '../../domain/oauth/device-authorization.js';
import { applicationOwner } from '../../domain/applications.js';
import { LoginThrottledError } from '../../domain/login-throttle.js';
import type { UserRecord } from '../../domain/storage/records.js';
import { deviceAnsweredPage, deviceCodePage, deviceConfirmPage } from '../../pages/device.js';
import { csrfToken } from '../session.js';
import { devicePath } from './paths.js';
import { html, type PagesOptions, signedIn, userOf } from './shared.js';

type Schemas = components['schemas'];

const problems: Record<UnanswerableCode, string> = {
  unknown: 'No device is waiting for this code. Check the code your device shows and enter it again.',
  expired: 'This code has expired. Start again on your device to get a new code.',
  answered: 'This code has been answered already. If your device still waits, start again on it to get a new code.',
};

/** A code as the form shows it: normalised and in halves when it can be a code, as typed otherwise. */
const shown = (typed: string) => {
  const code = normaliseUserCode(typed);
  return code === undefined ? typed : displayUserCode(code);
};

/**
 * The application a device that showed `typed` asks for, for the sign-in page on the way to approving it. The code is
 * looked up as a signed-in user's would be, counted per address among wrong codes, so the sign-in page is no cheaper
 * a way to guess codes than the code form; past the count it names nobody.
 */
export async function deviceApplicationAsking({ storage, throttle, now }: PagesOptions, address: string, typed: string): Promise<string | undefined> {
  try {
    const found = await throttle.checkUserCode(null, address, async () => {
      const result = await lookUpDeviceAuthorization(storage, typed, now());
      return { result, right: result.outcome === 'pending' };
    });
    return found.outcome === 'pending' ? found.application.name : undefined;
  } catch (error) {
    if (error instanceof LoginThrottledError) return undefined;
    throw error;
  }
}

export function deviceRoutes({ storage, now, throttle }: PagesOptions): Router {
  const router = Router();
  const codeForm = (req: Request, user: UserRecord, userCode: string | undefined, error?: string) => deviceCodePage({ user, csrf: csrfToken(req), userCode, error });

  router.get(devicePath, async (req, res) => {
    const user = await signedIn(storage, req, res);
    if (!user) return;
    const typed = typeof req.query.user_code === 'string' ? req.query.user_code : undefined;
    html(res, 200, codeForm(req, user, typed === undefined ? undefined : shown(typed)));
  });

  router.post(`${devicePath}/confirm`, async (req, res) => {
    const user = await userOf(storage, req);
    const body = req.body as Schemas['DeviceCodeForm'];
    const found = await throttle.checkUserCode(user.id, req.ip ?? '', async () => {
      const result = await lookUpDeviceAuthorization(storage, body.user_code, now());
      return { result, right: result.outcome === 'pending' };
    });
    if (found.outcome !== 'pending') return html(res, 400, codeForm(req, user, body.user_code, problems[found.outcome]));
    const { application, scopes, userCode } = found;
    const owner = await applicationOwner(storage, application);
    html(res, 200, deviceConfirmPage({ user, csrf: csrfToken(req), application, owner, scopes, userCode, displayedCode: displayUserCode(userCode) }));
  });

  router.post(devicePath, async (req, res) => {
    const user = await userOf(storage, req);
    const body = req.body as Schemas['DeviceDecisionForm'];
    // When the user signed in: the session's, as an ID token issued from this approval would state it.
    const authTime = req.session.signedInAt ?? now();
    const answered = await throttle.checkUserCode(user.id, req.ip ?? '', async () => {
      const result = await answerDeviceAuthorization(storage, body.user_code, { user_id: user.id, decision: body.decision, auth_time: authTime }, now());
      return { result, right: result.outcome === 'recorded' };
    });
    if (answered.outcome !== 'recorded') return html(res, 400, codeForm(req, user, shown(body.user_code), problems[answered.outcome]));
    html(res, 200, deviceAnsweredPage(user, csrfToken(req), answered.application, answered.decision));
  });

  return router;
}
