// /api/v3: thin handlers over the domain. Requests reach here authenticated and validated against the document.
import type { Request, RequestHandler, Response } from 'express';
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
import { presentGroup, presentProject, presentSimpleProject } from '../domain/namespaces.js';
import { groupMember, listGroups, listProjects, presentMember, projectMember, type GroupListQuery, type ProjectListQuery } from '../domain/namespace-lists.js';
import { presentUser, presentUserTo } from '../domain/users.js';
import { presentInstanceMetadata, presentPersonalAccessToken } from '../domain/instance.js';
import { revokePersonalAccessToken } from '../domain/accounts.js';
import { version as tokenbellVersion } from '../version.js';
import { HttpError } from './errors.js';
import { dispatchByOperation, type OperationHandlers } from './dispatch.js';
import { sendPage } from './pagination.js';
import { queryWithFlags } from './query-flags.js';
import { isoOf } from '../domain/time.js';

type Schemas = components['schemas'];

export const principalOf = (res: { locals: Record<string, unknown> }) => res.locals.principal as ApiPrincipal;

interface OpenApiRequest extends Request {
  openapi?: { schema?: { security?: Record<string, string[]>[] } };
}

/** The 403 of a token that lacks `scope`, with its RFC 6750 section 3.1 challenge: an operation's scope, or sudo's. */
export const insufficientScope = (scope: Scope) =>
  new HttpError(403, `403 Forbidden - insufficient_scope: this action needs the ${scope} scope`, {
    'WWW-Authenticate': `Bearer realm="tokenbell", error="insufficient_scope", scope="${scope}"`,
  });

/** The operation's `oauth2` requirement in the document names the least scope it needs (see the document's info). */
function assertDocumentedScope(req: Request, res: Response): void {
  const security = (req as OpenApiRequest).openapi?.schema?.security ?? [];
  const required = security.find((s) => s.oauth2)?.oauth2?.[0] as Scope | undefined;
  if (required && !satisfies(principalOf(res).scopes, required)) throw insufficientScope(required);
}

export const requireDocumentedScope: RequestHandler = (req, res, next) => {
  assertDocumentedScope(req, res);
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

/** The personal access token the request was made with, or 404 as the service answers an OAuth token here. */
function ownPersonalAccessToken(res: Response) {
  const token = principalOf(res).personalAccessToken;
  if (!token) throw new HttpError(404, '404 Not Found');
  return token;
}

/** Each /api/v3 operation's handler, by the document's operationId. */
function apiOperations(storage: Storage, baseUrl: string, gitlabVersion: string): OperationHandlers {
  const settings = storage.notificationSettings;
  const sourceId = (req: Request, res: Response, type: SourceType) => visibleSourceId(storage, principalOf(res).user, type, String(req.params.id));
  const metadata = presentInstanceMetadata(gitlabVersion, tokenbellVersion);
  return {
    getVersion: (_req, res) => void res.json(metadata),
    getMetadata: (_req, res) => void res.json(metadata),
    getCurrentPersonalAccessToken: (_req, res) => void res.json(presentPersonalAccessToken(ownPersonalAccessToken(res))),
    revokeCurrentPersonalAccessToken: async (_req, res) => {
      const token = ownPersonalAccessToken(res);
      await revokePersonalAccessToken(storage, token.user_id, token.id);
      res.status(204).end();
    },
    getUser: async (req, res) => {
      const user = await storage.users.byId(Number(req.params.id));
      if (!user) throw new HttpError(404, '404 User Not Found');
      res.json(presentUserTo(principalOf(res).user, user, baseUrl));
    },
    getCurrentUser: (_req, res) => void res.json(presentUser(principalOf(res).user, baseUrl)),
    listGroups: async (req, res) => {
      const groups = await listGroups(storage.namespaces, principalOf(res).user, queryWithFlags<GroupListQuery>('listGroups', req.query));
      await sendPage(req, res, baseUrl, groups, (group) => presentGroup(group, baseUrl));
    },
    listProjects: async (req, res) => {
      const query = queryWithFlags<ProjectListQuery>('listProjects', req.query);
      const projects = await listProjects(storage.namespaces, principalOf(res).user, query);
      await sendPage(req, res, baseUrl, projects, (project) => (query.simple ? presentSimpleProject : presentProject)(storage, project, baseUrl));
    },
    getGroupMember: async (req, res) => {
      const { group, member } = await groupMember(storage, principalOf(res).user, String(req.params.id), Number(req.params.user_id));
      if (!group) throw new HttpError(404, '404 Group Not Found');
      if (!member) throw new HttpError(404, '404 Member Not Found');
      res.json(presentMember(member, baseUrl));
    },
    getProjectMember: async (req, res) => {
      const { project, member } = await projectMember(storage, principalOf(res).user, String(req.params.id), Number(req.params.user_id));
      if (!project) throw new HttpError(404, '404 Project Not Found');
      if (!member) throw new HttpError(404, '404 Member Not Found');
      res.json(presentMember(member, baseUrl));
    },
    getGroup: async (req, res) => void res.json(presentGroup(await seenGroup(storage, principalOf(res).user, String(req.params.id)), baseUrl)),
    getProject: async (req, res) => void res.json(await presentProject(storage, await seenProject(storage, principalOf(res).user, String(req.params.id)), baseUrl)),
    getGlobalNotificationSettings: (_req, res) => void res.json(presentGlobal(principalOf(res))),
    updateGlobalNotificationSettings: async (req, res) => void res.json(await updateGlobal(settings, principalOf(res).user, settingsParams(req))),
    getGroupNotificationSettings: async (req, res) => void res.json(await presentSource(settings, principalOf(res).user, 'group', await sourceId(req, res, 'group'))),
    updateGroupNotificationSettings: async (req, res) =>
      void res.json(await updateSource(settings, principalOf(res).user, 'group', await sourceId(req, res, 'group'), settingsParams(req))),
    getProjectNotificationSettings: async (req, res) => void res.json(await presentSource(settings, principalOf(res).user, 'project', await sourceId(req, res, 'project'))),
    updateProjectNotificationSettings: async (req, res) =>
      void res.json(await updateSource(settings, principalOf(res).user, 'project', await sourceId(req, res, 'project'), settingsParams(req))),
  };
}

/**
 * The API's handlers, chosen by the operation request validation found (`req.openapi`): the route table the
 * validation compiled from the document makes the one routing decision, and no router matches the path again. A
 * request for another operation (the test helpers') goes on.
 */
export function apiDispatch(storage: Storage, baseUrl: string, gitlabVersion: string): RequestHandler {
  return dispatchByOperation(apiOperations(storage, baseUrl, gitlabVersion), assertDocumentedScope);
}
