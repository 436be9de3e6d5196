// The sign-in form (password, then the code for a two-factor account) and signing out.
import type { components } from '@tokenbell/sdk';
import { Router } from 'express';
import { limits } from '../../config.js';
import { codeStep, passwordStep } from '../../domain/sign-in.js';
import { signInPage, twoFactorPage } from '../../pages/sign-in.js';
import { endSession, sessionCookieName, startSignedInSession, startTwoFactorStep } from '../session.js';
import { applicationAsking } from './authorize-routes.js';
import { deviceApplicationAsking } from './device-routes.js';
import { devicePath } from './paths.js';
import { home, html, localPath, type PagesOptions, redirect, signInPath } from './shared.js';

const noAuthenticator =
  'This account has two-factor authentication, but no authenticator is registered for it on this server, so it cannot sign in here. Its seed entry needs an otp_secret.';

/** The application whose authorization request or device approval the sign-in interrupts, named on the page. */
function whoIsAsking(options: PagesOptions, address: string, returnTo: string | undefined): Promise<string | undefined> {
  const resumed = returnTo === undefined ? undefined : new URL(returnTo, 'http://tokenbell.invalid');
  const userCode = resumed?.searchParams.get('user_code');
  if (resumed?.pathname.toLowerCase() === devicePath && userCode) return deviceApplicationAsking(options, address, userCode);
  return applicationAsking(options.storage, returnTo);
}

export function signInRoutes(options: PagesOptions): Router {
  const { storage, now, throttle, signInCsrf } = options;
  const router = Router();

  router.get(signInPath, async (req, res) => {
    const returnTo = localPath(req.query.return_to);
    html(res, 200, signInPage({ csrf: signInCsrf.token(req, res), returnTo, application: await whoIsAsking(options, req.ip ?? '', returnTo) }));
  });

  router.post(signInPath, async (req, res) => {
    const body = req.body as components['schemas']['SignInForm'];
    const returnTo = localPath(body.return_to);
    const address = req.ip ?? '';
    const application = await whoIsAsking(options, address, returnTo);
    const csrf = () => signInCsrf.token(req, res);

    if ('otp_attempt' in body) {
      const step = await codeStep(throttle, storage, req.session.twoFactor, body.otp_attempt, now(), address);
      if (step.outcome === 'not-started') {
        delete req.session.twoFactor;
        const error = 'The sign-in was not started or took too long. Enter your login and password again.';
        return html(res, 401, signInPage({ csrf: csrf(), returnTo, application, error }));
      }
      if (step.outcome === 'wrong-code') return html(res, 401, twoFactorPage({ csrf: csrf(), returnTo, application, error: 'Invalid code.' }));
      await startSignedInSession(req, step.userId, now());
      return redirect(res, returnTo ?? home);
    }

    const step = await passwordStep(throttle, storage, body.login, body.password, address);
    switch (step.outcome) {
      case 'wrong-credentials':
        // One message whatever was wrong, so the page does not tell which logins exist.
        return html(res, 401, signInPage({ csrf: csrf(), returnTo, application, login: body.login, error: 'Invalid login or password.' }));
      case 'no-authenticator':
        return html(res, 401, signInPage({ csrf: csrf(), returnTo, application, login: body.login, error: noAuthenticator }));
      case 'code-needed':
        startTwoFactorStep(req, step.user.id, now(), limits.twoFactorStepSeconds);
        return html(res, 200, twoFactorPage({ csrf: csrf(), returnTo, application }));
      case 'signed-in':
        await startSignedInSession(req, step.user.id, now());
        return redirect(res, returnTo ?? home);
    }
  });

  router.post('/users/sign_out', async (req, res) => {
    await endSession(req);
    res.clearCookie(sessionCookieName, { path: '/', httpOnly: true, sameSite: 'lax' });
    redirect(res, signInPath);
  });

  return router;
}
