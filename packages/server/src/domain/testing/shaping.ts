// The test kit's state-shaping helpers (the document's `test_helpers` area): users, groups, projects, memberships and
// applications go through the seed fixture's checks and its single write, so a test meets the rules and the errors
// an operator's fixture does; tokens and authorizations go through the real grants' own code.
import type { components } from '@tokenbell/sdk';
import { InputError } from '../../explained-error.js';
import { SeedError, type SeedFixture } from '../seed/fixture.js';
import { loadSeed } from '../seed/load.js';
import type { ScryptParameters } from '../passwords.js';
import type { Storage } from '../storage/index.js';
import type { ApplicationRecord, Scope, UserRecord } from '../storage/records.js';
import { createPersonalAccessToken } from '../accounts.js';
import { findApplicationByUid, isConfidential } from '../applications.js';
import { newClientId, newSecret } from '../secrets.js';
import { findGroup, findProject } from '../visibility.js';
import { approveAuthorization, checkAuthorizationRequest } from '../oauth/authorization.js';
import { answerDeviceAuthorization } from '../oauth/device-authorization.js';
import { formatScope } from '../oauth/scopes.js';
import { exchangeAuthorizationCode } from '../oauth/token-endpoint.js';
import { calculateChallenge, newVerifier } from '../oauth/pkce.js';
import type { TokenResponse } from '../oauth/tokens.js';
import { type IdTokenSettings, withIdToken } from '../oidc/id-token.js';

type Schemas = components['schemas'];

/**
 * Applies a one-entry fixture; its refusal becomes the domain's InputError, worded without the fixture's
 * `users[0].` prefix since the request is the entry.
 */
async function seedOne(storage: Storage, fixture: SeedFixture, hashing?: ScryptParameters): Promise<void> {
  try {
    await loadSeed(storage, fixture, { skipIdentical: false, ...(hashing ? { hashing } : {}) });
  } catch (error) {
    if (!(error instanceof SeedError)) throw error;
    const [first, ...rest] = error.problems.map((problem) => problem.replace(/^\w+\[0\]\.?/, ''));
    const [field, ...message] = first!.split(': ');
    // The answer puts the field first (`username "alice" is already taken`); the fixture's message may name it again.
    const text = message.join(': ');
    const predicate = text.startsWith(`the ${field} `) ? text.slice(`the ${field} `.length) : text;
    throw new InputError(field!, [predicate, ...rest].join('; '));
  }
}

/** A user as a seed's entry; the password hashed with `hashing` (the instance's, production's unless it is a test kit's). */
export async function createTestUser(storage: Storage, input: Schemas['TestUserRequest'], hashing?: ScryptParameters): Promise<UserRecord> {
  await seedOne(storage, { users: [input] }, hashing);
  return (await storage.users.byUsername(input.username))!;
}

export async function createTestGroup(storage: Storage, input: Schemas['TestGroupRequest']) {
  await seedOne(storage, { groups: [{ visibility: 'private', ...input }] });
  return (await storage.namespaces.groupByPath(input.path))!;
}

export async function createTestProject(storage: Storage, input: Schemas['TestProjectRequest']) {
  await seedOne(storage, { projects: [{ visibility: 'private', ...input }] });
  return (await storage.namespaces.projectByFullPath(`${input.namespace}/${input.path}`))!;
}

/** Registers the application; the secret (made here when not given) is answered once, as on the applications page. */
export async function createTestApplication(storage: Storage, input: Schemas['TestApplicationRequest']): Promise<Schemas['TestApplication']> {
  const confidential = input.confidential !== false;
  const client_id = input.client_id ?? newClientId();
  const client_secret = confidential ? (input.client_secret ?? newSecret('clientSecret')) : undefined;
  if (!confidential && input.client_secret !== undefined) throw new InputError('client_secret', 'must not be given for a public client (confidential: false)');
  await seedOne(storage, { applications: [{ ...input, client_id, ...(client_secret === undefined ? {} : { client_secret }) }] });
  const record = (await findApplicationByUid(storage, client_id))!;
  return {
    id: record.id,
    name: record.name,
    owner: input.owner,
    client_id,
    client_secret: client_secret ?? null,
    redirect_uris: [...record.redirect_uris],
    scopes: [...record.scopes],
    confidential,
  };
}

async function userNamed(storage: Storage, field: string, username: string): Promise<UserRecord> {
  const user = await storage.users.byUsername(username);
  if (!user) throw new InputError(field, `must name an existing user: there is no user ${JSON.stringify(username)}`, 'unknown');
  return user;
}

async function applicationNamed(storage: Storage, clientId: string): Promise<ApplicationRecord> {
  const application = await findApplicationByUid(storage, clientId);
  if (!application) throw new InputError('client_id', `must name a registered application: there is none with App ID ${JSON.stringify(clientId)}`, 'unknown');
  return application;
}

/** Makes the user a member with this access level, replacing the membership they had there. */
export async function setTestMembership(storage: Storage, input: Schemas['TestMembership']): Promise<Schemas['TestMembership']> {
  const user = await userNamed(storage, 'username', input.username);
  if (input.group !== undefined) {
    const group = await findGroup(storage.namespaces, input.group);
    if (!group) throw new InputError('group', `must name an existing group: there is no group ${JSON.stringify(input.group)}`, 'unknown');
    await storage.namespaces.setMembership({ groupId: group.id }, user.id, input.access_level);
    return { username: user.username, group: group.path, access_level: input.access_level };
  }
  const project = await findProject(storage.namespaces, input.project!);
  if (!project) throw new InputError('project', `must name an existing project: there is no project ${JSON.stringify(input.project)}`, 'unknown');
  await storage.namespaces.setMembership({ projectId: project.id }, user.id, input.access_level);
  return { username: user.username, project: `${project.namespace}/${project.path}`, access_level: input.access_level };
}

export async function mintPersonalAccessToken(storage: Storage, input: Schemas['MintPersonalAccessTokenRequest']) {
  const user = await userNamed(storage, 'username', input.username);
  return createPersonalAccessToken(storage, user.id, { name: input.name, expires_at: input.expires_at ?? null, ...(input.scopes ? { scopes: input.scopes } : {}) });
}

export interface GrantTiming {
  now: number;
  codeTtl: number;
  tokenTtl: number;
  openId: IdTokenSettings;
}

/**
 * The authorization step for a user who signed in and approved: the parameters are checked as the authorization
 * endpoint checks them, and the answer is where it would have sent the browser. An unknown client or unregistered
 * redirect URI, which the endpoint answers with a page, is refused.
 */
export async function authorizeHeadlessly(storage: Storage, input: Schemas['HeadlessAuthorizationRequest'], timing: GrantTiming): Promise<Schemas['HeadlessAuthorization']> {
  const user = await userNamed(storage, 'username', input.username);
  const { username: _, ...params } = input;
  const checked = await checkAuthorizationRequest(storage, { ...params, response_type: 'code' });
  if (checked.outcome === 'show-error') throw new InputError(checked.problem === 'unknown-client' ? 'client_id' : 'redirect_uri', checked.message);
  // Headless: the user signs in and approves in the same moment.
  const location = checked.outcome === 'valid' ? await approveAuthorization(storage, user.id, checked.request, { ...timing, authTime: timing.now }) : checked.location;
  const query = new URL(location).searchParams;
  const code = query.get('code');
  const state = query.get('state');
  // The redirect carries a code or an error, never both (RFC 6749 sections 4.1.2 and 4.1.2.1).
  return code !== null ? { redirect_to: location, code, state, error: null } : { redirect_to: location, code: null, state, error: query.get('error') ?? 'server_error' };
}

/**
 * A token pair as the authorization code grant issues it: the user approves and the code is exchanged, both inside
 * the instance (with a PKCE pair of its own, which a public client needs), so the pair is in the code's chain.
 */
export async function mintAccessToken(storage: Storage, input: Schemas['MintAccessTokenRequest'], timing: GrantTiming): Promise<TokenResponse> {
  const user = await userNamed(storage, 'username', input.username);
  const application = await applicationNamed(storage, input.client_id);
  const scopes: readonly Scope[] = input.scopes ?? application.scopes;
  const outside = scopes.filter((scope) => !application.scopes.includes(scope));
  if (outside.length > 0) throw new InputError('scopes', `must be within the application's scopes (${application.scopes.join(', ')}): ${outside.join(', ')} is not`);
  const verifier = newVerifier();
  const redirect_uri = application.redirect_uris[0]!;
  const checked = await checkAuthorizationRequest(storage, {
    client_id: application.uid,
    redirect_uri,
    response_type: 'code',
    scope: scopes.join(' '),
    ...(isConfidential(application) ? {} : { code_challenge: calculateChallenge(verifier), code_challenge_method: 'S256' }),
    ...(input.nonce === undefined ? {} : { nonce: input.nonce }),
  });
  if (checked.outcome !== 'valid') throw new Error(`the application's own registration was refused: ${JSON.stringify(checked)}`);
  const location = await approveAuthorization(storage, user.id, checked.request, { ...timing, authTime: timing.now });
  const code = new URL(location).searchParams.get('code')!;
  const issued = await exchangeAuthorizationCode(
    { storage, client: application, now: timing.now, tokenTtl: timing.tokenTtl },
    { grant_type: 'authorization_code', code, redirect_uri, ...(isConfidential(application) ? {} : { code_verifier: verifier }) },
  );
  // With `openid`, the id_token the token endpoint would answer, signed by the instance's key.
  return withIdToken(storage, issued, timing.now, timing.openId);
}

const unanswerableCodes = {
  unknown: 'must be the code of a device authorization: there is none with this code',
  expired: 'has expired: the device must start a new device authorization',
  answered: 'was answered already: a device authorization is approved or denied once',
};

/**
 * The verification page's answer for a user who typed the code, signed in at `now`: the code goes through the same
 * normalisation and single answer as on the page (domain/oauth/device-authorization.ts).
 */
export async function decideDeviceAuthorizationHeadlessly(
  storage: Storage,
  input: Schemas['HeadlessDeviceDecisionRequest'],
  now: number,
): Promise<Schemas['HeadlessDeviceDecision']> {
  const user = await userNamed(storage, 'username', input.username);
  const answered = await answerDeviceAuthorization(storage, input.user_code, { user_id: user.id, decision: input.decision, auth_time: now }, now);
  if (answered.outcome !== 'recorded') throw new InputError('user_code', unanswerableCodes[answered.outcome], answered.outcome === 'unknown' ? 'unknown' : 'invalid');
  return { client_id: answered.application.uid, scope: formatScope(answered.scopes), username: user.username, decision: input.decision };
}
