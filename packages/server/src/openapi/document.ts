// The OpenAPI document at run time: the validator reads it, and lists the document already states (levels, events,
// scopes, grant types) are taken from it here rather than written again.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { components } from '@tokenbell/sdk';

type NotificationEvent = components['schemas']['NotificationEvent'];
type NotificationLevel = components['schemas']['NotificationLevel'];
/** Scopes as the document's oauth2 scheme lists them (the list below is read from it). */
export type Scope = 'api' | 'read_api' | 'read_user';

const near = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));

// The build copies the document next to the code (dist/openapi.yaml) with its JSON conversion (dist/openapi.json),
// which loads in a few milliseconds where the YAML parser took 150-300 at every start. Running from source, the
// repository's own file is read, and parsed.
const built = { yaml: near('../openapi.yaml'), json: near('../openapi.json') };

export const documentPath = existsSync(built.yaml) ? built.yaml : near('../../../../openapi/openapi.yaml');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const document: any = existsSync(built.json)
  ? JSON.parse(readFileSync(built.json, 'utf8'))
  : (await import('yaml')).parse(readFileSync(documentPath, 'utf8'));

const schemas = document.components.schemas;
export const notificationEvents: readonly NotificationEvent[] = schemas.NotificationEvent.enum;
export const notificationLevels: readonly NotificationLevel[] = schemas.NotificationLevel.enum;
export const scopes: readonly Scope[] = Object.keys(document.components.securitySchemes.oauth2.flows.authorizationCode.scopes) as Scope[];
export const grantTypes: readonly string[] = Object.keys(schemas.TokenRequest.discriminator.mapping);
