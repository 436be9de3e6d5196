// /api/v3: thin handlers over the domain. Requests reach here authenticated and validated against the document.
import { Router, type Request, type RequestHandler } from 'express';
import type { components } from '@tokenbell/sdk';
import type { ApiPrincipal } from '../domain/api-authentication.js';
import {
  presentGlobal,
  presentSource,
  updateGlobal,
  updateSource,
  type SourceType,
} from '../domain/notification-settings.js';
import { satisfies } from '../domain/oauth/scopes.js';
import { visibleGroup, visibleProject } from '../domain/visibility.js';
import type { Group, Project, Storage } from '../domain/storage/index.js';
import type { Scope, UserRecord } from '../domain/storage/records.js';
import { presentGroup, presentProject } from '../domain/namespaces.js';
import { presentUser } from '../domain/users.js';
import { HttpError } from './errors.js';
import { isoOf } from '../domain/time.js';

type Schemas = components['schemas'];

export const principalOf = (res: { locals: Record<string, unknown> }) => res.locals.principal as ApiPrincipal;

interface OpenApiRequest extends Request {
  openapi?: { schema?: { security?: Record<string, string[]>[] } };
}

/** The operation's `oauth2` requirement in the document names the least scope it needs (see the document's info). */
export const requireDocumentedScope: RequestHandler = (req, res, next) => {
  const security = (req as OpenApiRequest).openapi?.schema?.security ?? [];
  const required = security.find((s) => s.oauth2)?.oauth2?.[0] as Scope | undefined;
  if (required && !satisfies(principalOf(res).scopes, required)) {
    throw new HttpError(403, `403 Forbidden - insufficient_scope: this action needs the ${required} scope`, {
      'WWW-Authenticate': `Bearer realm="tokenbell", error="insufficient_scope", scope="${required}"`,
    });
  }
  next();
};

/** Query and body parameters together; the body wins where both name one (spec 4.4: either may carry them). */
function settingsParams<T>(req: Request): T {
  const { access_token: _ignored, ...query } = req.query as Record<string, unknown>;
  const body = req.body && typeof req.body === 'object' ? (req.body as Record<string, unknown>) : {};
  return { ...query, ...body } as T;
}

/** The group, or 404 exactly as if it did not exist when the user may not see it. */
async function seenGroup(storage: Storage, user: UserRecord, idOrPath: string): Promise<Group> {
  const group = await visibleGroup(storage.namespaces, user, idOrPath);
  if (!group) throw new HttpError(404, '404 Group Not Found');
  return group;
}

/** The project, or 404 exactly as if it did not exist when the user may not see it. */
async function seenProject(storage: Storage, user: UserRecord, idOrPath: string): Promise<Project> {
  const project = await visibleProject(storage.namespaces, user, idOrPath);
  if (!project) throw new HttpError(404, '404 Project Not Found');
  return project;
}

const visibleSourceId = async (storage: Storage, user: UserRecord, type: SourceType, idOrPath: string): Promise<number> =>
  (type === 'group' ? await seenGroup(storage, user, idOrPath) : await seenProject(storage, user, idOrPath)).id;

export function apiRouter(storage: Storage, baseUrl: string): Router {
  const router = Router();
  const settings = storage.notificationSettings;
  router.use(requireDocumentedScope);

  router.get('/user', (_req, res) => {
    res.json(presentUser(principalOf(res).user, baseUrl));
  });
  router.get('/groups/:id', async (req, res) => {
    res.json(presentGroup(await seenGroup(storage, principalOf(res).user, String(req.params.id)), baseUrl));
  });
  router.get('/projects/:id', async (req, res) => {
    res.json(await presentProject(storage, await seenProject(storage, principalOf(res).user, String(req.params.id)), baseUrl));
  });
  router.get('/notification_settings', (_req, res) => {
    res.json(presentGlobal(principalOf(res)));
  });
  router.put('/notification_settings', async (req, res) => {
    res.json(await updateGlobal(settings, principalOf(res).user, settingsParams(req)));
  });
  for (const type of ['group', 'project'] as const) {
    const path = `/${type}s/:id/notification_settings`;
    router.get(path, async (req, res) => {
      const user = principalOf(res).user;
      res.json(await presentSource(settings, user, type, await visibleSourceId(storage, user, type, String(req.params.id))));
    });
    router.put(path, async (req, res) => {
      const user = principalOf(res).user;
      const id = await visibleSourceId(storage, user, type, String(req.params.id));
      res.json(await updateSource(settings, user, type, id, settingsParams(req)));
    });
  }
  return router;
}
