// The authorization endpoint's browser side (RFC 6749 section 4.1.1): the consent page and its decision.
import type { components } from '@tokenbell/sdk';
import { Router, type Request, type Response } from 'express';
import helmet from 'helmet';
import {
  alreadyAuthorized,
  approveAuthorization,
  authorizationParamNames,
  checkAuthorizationRequest,
  denyAuthorization,
  refuseWithoutPage,
  type ValidAuthorizationRequest,
} from '../../domain/oauth/authorization.js';
import { afterSignIn, authorizationStep } from '../../domain/oauth/prompt.js';
import { applicationOwner } from '../../domain/applications.js';
import { consentPage } from '../../pages/consent.js';
import { HttpError } from '../errors.js';
import { csrfToken, sessionSignedInAt, startSignedInSession } from '../session.js';
import { authorizationParams, authorizationResumePath } from './resume-paths.js';
import { baseDirectives } from './headers.js';
import { currentUser, html, localPath, type PagesOptions, redirect, signInLocation, userOf } from './shared.js';

/**
 * The consent page's policy. CSP `form-action` governs not only where a form posts but, in Chromium, every
 * redirect that follows the submission: the consent form posts to 'self', which answers 302 to the client's
 * redirect URI, and with `form-action 'self'` alone Chromium blocks that navigation. So this one page also allows
 * the origin of the (already verified, exactly registered) redirect URI of the request it shows, and nothing else.
 */
const consentPolicy = helmet.contentSecurityPolicy({
  useDefaults: false,
  directives: { ...baseDirectives, formAction: ["'self'", (_req, res) => (res as Response).locals.redirectSource as string] },
});

/** The CSP source for a redirect URI: its origin, or for private-use schemes (RFC 8252) the scheme. */
export function formActionSource(redirectUri: string): string {
  const url = new URL(redirectUri);
  // Hosts may contain characters (";", ",") that would end a CSP directive; such an origin falls back to its scheme.
  if ((url.protocol === 'http:' || url.protocol === 'https:') && /^https?:\/\/[A-Za-z0-9.\-[\]:]+$/.test(url.origin)) return url.origin;
  return url.protocol;
}

const problemAdvice = {
  'unknown-client': 'The application that sent you here is not registered on this server: its App ID (client_id) is unknown. Tell its developer; nothing was shared with it.',
  'unregistered-redirect-uri':
    'The application that sent you here asked to send you back to an address it has not registered, so you were not sent there. Tell its developer to register that redirect URI; nothing was shared with it.',
} as const;

/**
 * The error page of a request that must not redirect. An unregistered redirect URI is named as it was sent (cut at
 * 200 characters; the page escapes it), so the developer reading it can compare it with the registered ones.
 */
function refused(checked: { problem: keyof typeof problemAdvice; message: string }, sentRedirectUri: string): HttpError {
  const advice = problemAdvice[checked.problem];
  if (checked.problem !== 'unregistered-redirect-uri') return new HttpError(400, checked.message, {}, advice);
  const shown = sentRedirectUri.length > 200 ? `${sentRedirectUri.slice(0, 200)}…` : sentRedirectUri;
  return new HttpError(400, checked.message, {}, `${advice} The redirect URI it sent: ${shown === '' ? '(none)' : shown}`);
}

/**
 * The application asking for access, when `returnTo` (a local path) resumes an authorization request that checks
 * out entirely (client, redirect URI, response type, scope, PKCE), so that the sign-in page can say who is asking;
 * a crafted link with a registered client but a bad redirect URI names nobody.
 */
export async function applicationAsking(storage: PagesOptions['storage'], returnTo: string | undefined): Promise<string | undefined> {
  if (!returnTo) return undefined;
  const url = new URL(returnTo, 'http://tokenbell.invalid');
  if (url.pathname.toLowerCase() !== '/oauth/authorize') return undefined;
  const checked = await checkAuthorizationRequest(storage, authorizationParams(Object.fromEntries(url.searchParams)));
  return checked.outcome === 'valid' ? checked.request.application.name : undefined;
}

export function authorizeRoutes({ storage, now, codeTtl, autoApproval }: PagesOptions): Router {
  const router = Router();
  const approve = (req: Request, userId: number, request: ValidAuthorizationRequest) =>
    approveAuthorization(storage, userId, request, { now: now(), codeTtl, authTime: sessionSignedInAt(req) ?? null });

  router.get('/oauth/authorize', async (req, res) => {
    const params = authorizationParams(req.query);
    const checked = await checkAuthorizationRequest(storage, params);
    if (checked.outcome === 'show-error') throw refused(checked, params.redirect_uri);
    const automatically = autoApproval?.();
    if (automatically) {
      // The test kit's automatic approval: signed in as the named user unless someone is, and approved at once.
      const signedInUser = await currentUser(storage, req);
      const user = signedInUser ?? (await storage.users.byUsername(automatically));
      if (user && !signedInUser) await startSignedInSession(req, user.id, now());
      if (user && checked.outcome === 'valid') return redirect(res, await approve(req, user.id, checked.request));
    }
    const user = await currentUser(storage, req);
    if (checked.outcome === 'redirect-error') {
      // Anyone can register an application with any redirect URI, so an error redirect for an anonymous visitor
      // would make this endpoint an open redirector (RFC 9700 section 4.11.2): sign in first, on this origin.
      return redirect(res, user ? checked.location : signInLocation(localPath(req.originalUrl)));
    }
    const { request } = checked;
    const consented = user !== undefined && (await alreadyAuthorized(storage, user.id, request, now()));
    const next = authorizationStep(request.interaction, { signedInAt: user && (sessionSignedInAt(req) ?? 0), now: now(), consented });
    if (next.step === 'refuse') return redirect(res, refuseWithoutPage(request, next.error));
    // Nobody signed in is always asked to (authorizationStep): the second test only tells the compiler so.
    if (next.step === 'sign-in' || !user) return redirect(res, signInLocation(authorizationResumePath(afterSignIn(request.params))));
    if (next.step === 'approve') return redirect(res, await approve(req, user.id, request));
    res.locals.redirectSource = formActionSource(request.redirect_uri);
    consentPolicy(req, res, (err?: unknown) => {
      if (err) throw err;
    });
    html(res, 200, consentPage(user, csrfToken(req), request, await applicationOwner(storage, request.application)));
  });

  router.post('/oauth/authorize', async (req, res) => {
    const user = await userOf(storage, req);
    const body = req.body as components['schemas']['ConsentDecision'];
    // The hidden fields are checked exactly as the query was: they are only as trustworthy as any other input.
    const params = authorizationParams(body);
    const checked = await checkAuthorizationRequest(storage, params);
    if (checked.outcome === 'show-error') throw refused(checked, params.redirect_uri);
    if (checked.outcome === 'redirect-error') return redirect(res, checked.location);
    const location =
      body.decision === 'approve'
        ? await approve(req, user.id, checked.request)
        : denyAuthorization(checked.request);
    redirect(res, location);
  });

  return router;
}
