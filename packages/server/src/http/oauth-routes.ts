// OAuth JSON endpoints: token, device authorization, revocation, introspection, token info, userinfo, server metadata
// and the JWK set.
// The browser-facing authorization endpoint lives with the pages (pages-routes.ts).
import type { Request, RequestHandler } from 'express';
import type { components } from '@tokenbell/sdk';
import { dispatchByOperation, type OperationHandler, type OperationHandlers } from './dispatch.js';
import { authenticateClientRequest } from '../domain/oauth/client-authentication.js';
import { introspectToken, revokeToken } from '../domain/oauth/revocation.js';
import { startDeviceAuthorization } from '../domain/oauth/device-authorization.js';
import { deviceCodeGrant, exchangeAuthorizationCode, passwordGrant, refreshGrant } from '../domain/oauth/token-endpoint.js';
import { tokenInfo } from '../domain/oauth/token-info.js';
import { keySetLifetime, publishedKeys } from '../domain/oidc/signing-keys.js';
import { accessDigestOf } from '../domain/oauth/tokens.js';
import { type IdTokenSettings, withIdToken } from '../domain/oidc/id-token.js';
import { userInfo } from '../domain/oidc/userinfo.js';
import type { LoginThrottle } from '../domain/login-throttle.js';
import { type GrantRegistry } from '../domain/oauth/grants.js';
import type { Metrics } from './operations.js';
import { limits } from '../config.js';
import { claimsSupported, scopes } from '../openapi/document.js';
import type { Storage } from '../domain/storage/index.js';
import type { ApplicationRecord } from '../domain/storage/records.js';

type Schemas = components['schemas'];

export interface OAuthRouterOptions {
  storage: Storage;
  baseUrl: string;
  tokenTtl: number;
  now: () => number;
  throttle: LoginThrottle;
  /** App IDs of the clients (resource servers) that may introspect every token, not only their own. */
  introspectionClients: readonly string[];
  grants: GrantRegistry;
  /** Counts the tokens issued by grant type. */
  metrics?: Metrics;
  /** How id_tokens are made and claims released (the issuer is `baseUrl`). */
  openId: Omit<IdTokenSettings, 'issuer'>;
  /** With test helpers on: the user who approves every new device authorization at once (the test kit's), or null. */
  autoApproval?: () => string | null;
}

const presentedClient = (req: Request) => {
  const body = req.body as Schemas['ClientCredentials'];
  return { authorization: req.headers.authorization, client_id: body.client_id, client_secret: body.client_secret };
};

export function metadata(baseUrl: string, grants: GrantRegistry): Schemas['AuthorizationServerMetadata'] {
  const authMethods = ['client_secret_basic', 'client_secret_post'];
  // Public clients send their client_id alone to the token and revocation endpoints; introspection is for
  // confidential clients (resource servers) only.
  const withPublic = [...authMethods, 'none'];
  return {
    issuer: baseUrl,
    authorization_endpoint: `${baseUrl}/oauth/authorize`,
    token_endpoint: `${baseUrl}/oauth/token`,
    revocation_endpoint: `${baseUrl}/oauth/revoke`,
    introspection_endpoint: `${baseUrl}/oauth/introspect`,
    userinfo_endpoint: `${baseUrl}/oauth/userinfo`,
    jwks_uri: `${baseUrl}/oauth/discovery/keys`,
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256'],
    claim_types_supported: ['normal'],
    claims_supported: [...claimsSupported],
    scopes_supported: [...scopes],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [...grants.enabled],
    token_endpoint_auth_methods_supported: withPublic,
    revocation_endpoint_auth_methods_supported: withPublic,
    introspection_endpoint_auth_methods_supported: authMethods,
    code_challenge_methods_supported: ['S256'],
    service_documentation: 'https://github.com/tokenbell/tokenbell#readme',
    device_authorization_endpoint: `${baseUrl}/oauth/authorize_device`,
  };
}

/** What the endpoints that answer tokens or their state send, that no cache keeps (RFC 6749 section 5.1). */
const noStore = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

/** The token endpoint (RFC 6749 section 3.2): one grant per request, each in token-endpoint.ts. */
function tokenEndpoint({ storage, tokenTtl, now, throttle, grants, metrics }: OAuthRouterOptions, oidc: IdTokenSettings): OperationHandler {
  return async (req, res) => {
    const body = req.body as Schemas['TokenRequest'];
    grants.assertServed(body.grant_type);
    // Credentials, when sent, must be right even where the grant does not require them.
    const client = await authenticateClientRequest(storage, presentedClient(req), {
      required: grants.clientRequired(body.grant_type),
      publicClients: grants.publicClientsAllowed(body.grant_type),
    });
    const base = { storage, now: now(), tokenTtl };
    let issued;
    if (body.grant_type === 'authorization_code') {
      issued = await exchangeAuthorizationCode({ ...base, client: client! }, body);
    } else if (body.grant_type === 'refresh_token') {
      issued = await refreshGrant({ ...base, client: client! }, body);
    } else if (body.grant_type === 'urn:ietf:params:oauth:grant-type:device_code') {
      issued = await deviceCodeGrant({ ...base, client: client! }, body);
    } else {
      const checkPassword = (login: string, password: string) => throttle.authenticate(storage, login, password, req.ip ?? '', { secondFactorCanFollow: false });
      issued = await passwordGrant({ ...base, client, checkPassword }, body);
    }
    const answer = await withIdToken(storage, issued, base.now, oidc);
    metrics?.grants.inc({ grant_type: body.grant_type });
    // For the request journal (request-journal.ts), which names the user a token was issued to: the grants answer
    // only the token response, so it finds the user by the token's digest once the answer is sent. A digest, as the
    // store keeps it: the token itself stays out of res.locals.
    res.locals.issuedAccessDigest = accessDigestOf(answer);
    res.set(noStore).json(answer);
  };
}

/** Each OAuth JSON endpoint's handler, by the document's operationId. */
function oauthOperations(options: OAuthRouterOptions): OperationHandlers {
  const { storage, baseUrl, now, introspectionClients, grants, openId, autoApproval, throttle } = options;
  const oidc: IdTokenSettings = { ...openId, issuer: baseUrl };

  const createToken = tokenEndpoint(options, oidc);

  const authorizeDevice: OperationHandler = async (req, res) => {
    const body = req.body as Schemas['DeviceAuthorizationRequest'];
    // Counted before anything else, so that a flood with made-up client ids is refused as cheaply as any.
    await throttle.countDeviceStart(req.ip ?? '');
    // A public client sends its client_id alone (RFC 8628 section 3.1); a confidential one authenticates.
    const client = (await authenticateClientRequest(storage, presentedClient(req), { required: true, publicClients: true }))!;
    const { expiresInSeconds: expiresIn, intervalSeconds: interval, pendingPerClient } = limits.deviceAuthorization;
    const settings = { baseUrl, now: now(), expiresIn, interval, pendingPerClient, approvedBy: autoApproval?.() ?? null };
    res.set(noStore).json(await startDeviceAuthorization(storage, client, body, settings));
  };

  const revoke: OperationHandler = async (req, res) => {
    const body = req.body as Schemas['RevocationRequest'];
    const client = await authenticateClientRequest(storage, presentedClient(req), { required: false, publicClients: true });
    await revokeToken(storage, client, body, now());
    res.json({});
  };

  const introspectsEveryToken = (client: ApplicationRecord) => introspectionClients.includes(client.uid);
  const introspect: OperationHandler = async (req, res) => {
    const body = req.body as Schemas['IntrospectionRequest'];
    const client = (await authenticateClientRequest(storage, presentedClient(req), { required: true }))!;
    res.set(noStore).json(await introspectToken(storage, client, body, now(), { introspectsEveryToken }));
  };

  const answerUserInfo: OperationHandler = async (req, res) => {
    const presented = { authorization: req.headers.authorization, accessTokenQuery: req.query.access_token };
    res.set(noStore).json(await userInfo(storage, presented, now(), oidc));
  };

  const answerTokenInfo: OperationHandler = async (req, res) => {
    const presented = { authorization: req.headers.authorization, accessTokenQuery: req.query.access_token };
    res.set(noStore).json(await tokenInfo(storage, presented, now()));
  };

  const keys: OperationHandler = async (_req, res) => {
    // Cached ten minutes, not a day as GitLab lets it be: a rotated-in key is published that long before it signs
    // (signing-keys.ts), which works only if no client keeps the set longer.
    res.set('Cache-Control', `public, max-age=${keySetLifetime}`).json(await publishedKeys(storage, now()));
  };

  // One document under both names (RFC 8414 section 3, OpenID Connect Discovery 1.0 section 4).
  const serverMetadata: OperationHandler = (_req, res) => void res.json(metadata(baseUrl, grants));

  return {
    createToken,
    authorizeDevice,
    revokeToken: revoke,
    introspectToken: introspect,
    getUserInfo: answerUserInfo,
    postUserInfo: answerUserInfo,
    getTokenInfo: answerTokenInfo,
    getJsonWebKeySet: keys,
    getAuthorizationServerMetadata: serverMetadata,
    getOpenIdConfiguration: serverMetadata,
  };
}

/**
 * The OAuth JSON endpoints, each chosen by the operation request validation found (`req.openapi`), as the API's are
 * (api-routes.ts): no router matches the path again. A request for another operation goes on.
 */
export function oauthDispatch(options: OAuthRouterOptions): RequestHandler {
  return dispatchByOperation(oauthOperations(options));
}
