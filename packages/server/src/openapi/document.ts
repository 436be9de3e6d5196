// The OpenAPI document at run time: the validator reads it, and lists the document already states (levels, events,
// scopes, grant types) are taken from it here rather than written again.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { components } from '@tokenbell/sdk';
import { fromSource, packageFile } from '../package-files.js';

type NotificationEvent = components['schemas']['NotificationEvent'];
type NotificationLevel = components['schemas']['NotificationLevel'];
export type Scope = components['schemas']['Scope'];
export type ApiScope = components['schemas']['ApiScope'];

// The build copies the document into dist/ (openapi.yaml) with its JSON conversion (openapi.json), which loads in a
// few milliseconds where the YAML parser took 150-300 at every start. Running from source, the repository's own file
// is read, and parsed. The YAML parser is loaded only then, and synchronously: a top-level `await import()` here
// would make every module that imports this one, the package's entries included, impossible to `require()`
// (ERR_REQUIRE_ASYNC_MODULE).
export const documentPath = packageFile(fromSource ? '../../openapi/openapi.yaml' : 'dist/openapi.yaml');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const document: any = fromSource
  ? (createRequire(import.meta.url)('yaml') as typeof import('yaml')).parse(readFileSync(documentPath, 'utf8'))
  : JSON.parse(readFileSync(packageFile('dist/openapi.json'), 'utf8'));

const schemas = document.components.schemas;
export const notificationEvents: readonly NotificationEvent[] = schemas.NotificationEvent.enum;
export const notificationLevels: readonly NotificationLevel[] = schemas.NotificationLevel.enum;
export const scopes: readonly Scope[] = schemas.Scope.enum;
/** Every claim an id_token or the userinfo answer may carry, as the discovery document lists them. */
export const claimsSupported: readonly string[] = [...new Set([...Object.keys(schemas.IdTokenClaims.properties), ...Object.keys(schemas.UserInfo.properties)])];
/** The scopes a personal access token may carry: the API's, not OpenID Connect's. */
export const apiScopes: readonly ApiScope[] = schemas.ApiScope.enum;
const oauth2Scheme = document.components.securitySchemes.oauth2;
/** Each scope in the service's words, as the `oauth2` scheme lists them (its flows list the same). */
export const scopeDescriptions: Readonly<Record<Scope, string>> = oauth2Scheme.flows.authorizationCode.scopes;
/** The scopes each scope also grants, directly (the scheme's `x-scope-includes`); a scope not named grants itself only. */
export const scopeIncludes: Readonly<Partial<Record<Scope, readonly Scope[]>>> = oauth2Scheme['x-scope-includes'];
/** The scopes a personal access token may carry only for an administrator (the scheme's `x-administrator-scopes`). */
export const administratorScopes: readonly ApiScope[] = oauth2Scheme['x-administrator-scopes'];
export const grantTypes: readonly string[] = Object.keys(schemas.TokenRequest.discriminator.mapping);
