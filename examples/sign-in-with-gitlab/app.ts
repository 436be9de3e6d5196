// "Sign in with GitLab" as an ordinary Express app writes it: the authorization code flow with state and PKCE
// (RFC 6749 section 4.1, RFC 7636), tokens kept in the server-side session, a refresh when the API says the access
// token is no longer good, and revocation on logout (RFC 7009). It talks to GitLab with plain fetch and knows
// nothing of tokenbell, so the same app runs against gitlab.com; tokenbell only stands in for it in app.test.ts.
import { createHash, randomBytes } from 'node:crypto';
import express, { type Request, type Response } from 'express';
import session, { MemoryStore, type Store } from 'express-session';

export interface AppOptions {
  /** The GitLab instance, e.g. https://gitlab.com. */
  gitlabUrl: string;
  clientId: string;
  clientSecret: string;
  /** This app's /callback as registered with the application, exactly. */
  redirectUri: string;
  /** Signs the session cookie; a random one (sessions end with the process) when not given. */
  sessionSecret?: string;
  /** Where sessions live; express-session's MemoryStore when not given, which suits one process and tests only. */
  sessionStore?: Store;
}

interface Tokens {
  access_token: string;
  refresh_token?: string;
}

declare module 'express-session' {
  interface SessionData {
    /** Between /login and /callback: what proves the callback answers our own request. */
    pending?: { state: string; verifier: string };
    tokens?: Tokens;
  }
}

export const sessionCookie = 'example_app.sid';

/** A refresh or code exchange the instance turned down; anything else (network, 5xx) is thrown as it is. */
class GrantRefused extends Error {}

export function createApp(options: AppOptions) {
  const { gitlabUrl, clientId, clientSecret, redirectUri } = options;
  const app = express();
  app.use(
    session({
      secret: options.sessionSecret ?? randomBytes(32).toString('base64url'),
      store: options.sessionStore ?? new MemoryStore(),
      resave: false,
      saveUninitialized: false,
      // A name of its own: cookies are per host, not per port, so on 127.0.0.1 the app and GitLab share a jar.
      name: sessionCookie,
      // Lax keeps the cookie off cross-site POSTs, which is what stands between /logout and a forged form here.
      cookie: { httpOnly: true, sameSite: 'lax' },
    }),
  );

  // RFC 6749 section 2.3.1: the id and secret are form-encoded before they are joined, so a ':' in either survives.
  const clientAuthorization = `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`;

  async function tokenRequest(params: Record<string, string>): Promise<Tokens> {
    const response = await fetch(`${gitlabUrl}/oauth/token`, {
      method: 'POST',
      headers: { authorization: clientAuthorization, accept: 'application/json' },
      body: new URLSearchParams(params),
    });
    const body = (await response.json().catch(() => ({}))) as Partial<Tokens> & { error?: string };
    // RFC 6749 section 5.2: a refused grant is a 400 (401 for the client) with an error code; a 5xx is an outage,
    // not a verdict on the user's session, so it must not sign anyone out.
    if ((response.status === 400 || response.status === 401) && body.error) throw new GrantRefused(body.error);
    if (!response.ok || !body.access_token) throw new Error(`the token endpoint answered ${response.status}`);
    return { access_token: body.access_token, ...(body.refresh_token ? { refresh_token: body.refresh_token } : {}) };
  }

  const currentUser = (tokens: Tokens) => fetch(`${gitlabUrl}/api/v4/user`, { headers: { authorization: `Bearer ${tokens.access_token}` } });

  const page = (res: Response, body: string, status = 200) =>
    res.status(status).type('html').send(`<!doctype html><title>Example app</title>${body}`);
  const signInLink = '<p><a href="/login">Sign in with GitLab</a></p>';

  app.get('/login', (req, res) => {
    const state = randomBytes(16).toString('base64url');
    const verifier = randomBytes(32).toString('base64url');
    req.session.pending = { state, verifier };
    const authorize = new URL('/oauth/authorize', gitlabUrl);
    authorize.search = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: 'read_user',
      state,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    res.redirect(authorize.href);
  });

  app.get('/callback', async (req, res, next) => {
    const pending = req.session.pending;
    const { code, state, error } = req.query;
    delete req.session.pending;
    // Without a matching state the code could be an attacker's, planted to sign this browser into their account.
    if (!pending || typeof state !== 'string' || state !== pending.state) return page(res, `<h1>Sign-in failed</h1><p>The answer did not match a sign-in started here.</p>${signInLink}`, 400);
    if (typeof error === 'string' || typeof code !== 'string') return page(res, `<h1>Sign-in failed</h1><p>GitLab answered ${escapeHtml(String(error ?? 'no code'))}.</p>${signInLink}`, 400);
    try {
      const tokens = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: pending.verifier });
      // A new session id once signed in, so an id planted before sign-in is worth nothing.
      req.session.regenerate((failed) => {
        if (failed) return next(failed);
        req.session.tokens = tokens;
        res.redirect('/');
      });
    } catch (failure) {
      if (failure instanceof GrantRefused) return page(res, `<h1>Sign-in failed</h1><p>GitLab answered ${escapeHtml(failure.message)}.</p>${signInLink}`, 400);
      next(failure);
    }
  });

  app.get('/', async (req, res, next) => {
    const tokens = req.session.tokens;
    if (!tokens) return page(res, `<h1>Welcome</h1>${signInLink}`);
    try {
      let answer = await currentUser(tokens);
      // An access token ends long before the user's session should; one refresh, then the user is asked again.
      if (answer.status === 401 && tokens.refresh_token) {
        try {
          req.session.tokens = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
        } catch (failure) {
          if (!(failure instanceof GrantRefused)) throw failure;
          return endSession(req, res, () => page(res, `<h1>Your session expired; sign in again</h1>${signInLink}`));
        }
        answer = await currentUser(req.session.tokens);
      }
      if (answer.status === 401) return endSession(req, res, () => page(res, `<h1>Your session expired; sign in again</h1>${signInLink}`));
      if (!answer.ok) throw new Error(`GET /api/v4/user answered ${answer.status}`);
      const user = (await answer.json()) as { username: string };
      page(res, `<h1>Signed in as ${escapeHtml(user.username)}</h1><form method="post" action="/logout"><button>Sign out</button></form>`);
    } catch (failure) {
      next(failure);
    }
  });

  app.post('/logout', async (req, res) => {
    const tokens = req.session.tokens;
    // RFC 7009 section 2.2: 200 whether or not the token was still valid, so the answer needs no reading. The user
    // asked to leave, so the session ends even when GitLab cannot be reached; the token then lives out its lifetime.
    if (tokens) {
      await fetch(`${gitlabUrl}/oauth/revoke`, {
        method: 'POST',
        headers: { authorization: clientAuthorization },
        body: new URLSearchParams({ token: tokens.access_token, token_type_hint: 'access_token' }),
      }).catch(() => undefined);
    }
    endSession(req, res, () => res.redirect(303, '/'));
  });

  return app;
}

function endSession(req: Request, res: Response, then: () => void) {
  req.session.destroy(() => {
    res.clearCookie(sessionCookie);
    then();
  });
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
