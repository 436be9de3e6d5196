// The OpenAPI document at run time: the validator reads it, and lists the document already states (levels, events,
// scopes, grant types) are taken from it here rather than written again.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { NotificationEvent, NotificationLevel, Scope } from '../store/schema.js';

// dist/openapi.yaml is copied by the build; the repository's own file is used when running from source.
const candidates = [
  new URL('../openapi.yaml', import.meta.url),
  new URL('../../../../openapi/openapi.yaml', import.meta.url),
].map((u) => fileURLToPath(u));

export const documentPath = candidates.find((p) => existsSync(p)) ?? candidates[candidates.length - 1]!;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const document: any = parse(readFileSync(documentPath, 'utf8'));

const schemas = document.components.schemas;
export const notificationEvents: readonly NotificationEvent[] = schemas.NotificationEvent.enum;
export const notificationLevels: readonly NotificationLevel[] = schemas.NotificationLevel.enum;
export const scopes: readonly Scope[] = Object.keys(document.components.securitySchemes.oauth2.flows.authorizationCode.scopes) as Scope[];
export const grantTypes: readonly string[] = Object.keys(schemas.TokenRequest.discriminator.mapping);
