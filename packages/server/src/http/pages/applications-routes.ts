// The applications page: registering and deleting the user's applications, and revoking the access of those the
// user has authorized (the password grant's tokens among them).
import type { components } from '@tokenbell/sdk';
import { Router, type Request, type Response } from 'express';
import { deleteApplication, listApplications, registerApplication } from '../../domain/applications.js';
import { authorizedApplications, revokeApplicationAuthorization } from '../../domain/authorized-applications.js';
import { redirectUriWarnings } from '../../domain/oauth/redirect-uris.js';
import { InputError } from '../../explained-error.js';
import { applicationCreatedPage, applicationsPage, type ApplicationFormState } from '../../pages/applications.js';
import type { Scope, UserRecord } from '../../domain/storage/records.js';
import { HttpError } from '../errors.js';
import { csrfToken } from '../session.js';
import { asList, describeFieldError, home, html, type PagesOptions, redirect, signedIn, userOf } from './shared.js';

export function applicationsRoutes({ storage, now }: PagesOptions): Router {
  const router = Router();

  const applicationsView = async (req: Request, user: UserRecord, status: number, res: Response, form?: ApplicationFormState) =>
    html(
      res,
      status,
      applicationsPage({
        user,
        csrf: csrfToken(req),
        applications: await listApplications(storage, user.id),
        authorized: await authorizedApplications(storage, user.id, now()),
        ...(form ? { form } : {}),
      }),
    );

  router.get('/profile/applications', async (req, res) => {
    const user = await signedIn(storage, req, res);
    if (user) await applicationsView(req, user, 200, res);
  });

  router.post('/profile/applications', async (req, res) => {
    const user = await userOf(storage, req);
    const body = req.body as components['schemas']['ApplicationForm'];
    const scopes = asList(body.scopes);
    const redirectUris = body.redirect_uri
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line !== '');
    try {
      const { record, secret } = await registerApplication(storage, user.id, {
        name: body.name,
        redirect_uris: redirectUris,
        ...(scopes ? { scopes: scopes as Scope[] } : {}),
        confidential: body.confidential !== 'false',
      });
      html(res, 201, applicationCreatedPage(user, csrfToken(req), record, secret, redirectUriWarnings(record.redirect_uris)));
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      await applicationsView(req, user, 400, res, { name: body.name, redirect_uri: body.redirect_uri, scopes, confidential: body.confidential !== 'false', error: describeFieldError(error) });
    }
  });

  router.post('/profile/applications/:application_id/delete', async (req, res) => {
    const user = await userOf(storage, req);
    if (!(await deleteApplication(storage, user.id, Number(req.params.application_id), now()))) {
      throw new HttpError(404, 'You have no such application.');
    }
    redirect(res, home);
  });

  // Before the route with the parameter, as the document's static path comes before its templated one.
  router.post('/profile/authorized_applications/password_grant/revoke', async (req, res) => {
    const user = await userOf(storage, req);
    if (!(await revokeApplicationAuthorization(storage, user.id, null, now()))) {
      throw new HttpError(404, 'No password grant tokens have access to your account.');
    }
    redirect(res, home);
  });

  router.post('/profile/authorized_applications/:application_id/revoke', async (req, res) => {
    const user = await userOf(storage, req);
    if (!(await revokeApplicationAuthorization(storage, user.id, Number(req.params.application_id), now()))) {
      throw new HttpError(404, 'No such application has access to your account.');
    }
    redirect(res, home);
  });

  return router;
}
