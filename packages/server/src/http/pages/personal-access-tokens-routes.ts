// The personal access tokens page: creating a token (shown once) and revoking one.
import type { components } from '@tokenbell/sdk';
import { Router, type Request, type Response } from 'express';
import { createPersonalAccessToken, listPersonalAccessTokens, revokePersonalAccessToken } from '../../domain/accounts.js';
import { InputError } from '../../explained-error.js';
import { personalAccessTokensPage, tokenCreatedPage, type TokenFormState } from '../../pages/personal-access-tokens.js';
import type { Scope, UserRecord } from '../../domain/storage/records.js';
import { HttpError } from '../errors.js';
import { csrfToken } from '../session.js';
import { asList, describeFieldError, html, type PagesOptions, redirect, signedIn, userOf } from './shared.js';

export function personalAccessTokensRoutes({ storage, now }: PagesOptions): Router {
  const router = Router();

  const tokensPath = '/profile/personal_access_tokens';
  const today = () => new Date(now() * 1000).toISOString().slice(0, 10);
  const tokensView = async (req: Request, user: UserRecord, status: number, res: Response, form?: TokenFormState) =>
    html(
      res,
      status,
      personalAccessTokensPage({
        user,
        csrf: csrfToken(req),
        tokens: await listPersonalAccessTokens(storage, user.id),
        today: today(),
        ...(form ? { form } : {}),
      }),
    );

  router.get(tokensPath, async (req, res) => {
    const user = await signedIn(storage, req, res);
    if (user) await tokensView(req, user, 200, res);
  });

  router.post(tokensPath, async (req, res) => {
    const user = await userOf(storage, req);
    const body = req.body as components['schemas']['PersonalAccessTokenForm'];
    const scopes = asList(body.scopes);
    try {
      const { record, token } = await createPersonalAccessToken(storage, user.id, {
        name: body.name,
        expires_at: body.expires_at ? body.expires_at : null,
        ...(scopes ? { scopes: scopes as Scope[] } : {}),
      }, new Date(now() * 1000));
      html(res, 201, tokenCreatedPage(user, csrfToken(req), record, token));
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      await tokensView(req, user, 400, res, { name: body.name, expires_at: body.expires_at, scopes, error: describeFieldError(error) });
    }
  });

  router.post(`${tokensPath}/:token_id/revoke`, async (req, res) => {
    const user = await userOf(storage, req);
    if (!(await revokePersonalAccessToken(storage, user.id, Number(req.params.token_id)))) {
      throw new HttpError(404, 'You have no such personal access token.');
    }
    redirect(res, tokensPath);
  });

  return router;
}
