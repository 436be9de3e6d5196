// What GitLab's tools ask an instance before anything else: its version (python-gitlab's `gl.version()`, gitbeaker's
// `Metadata.show()`), and the personal access token they hold (`/personal_access_tokens/self`).
import type { components } from '@tokenbell/sdk';
import type { PersonalAccessTokenRecord } from './storage/records.js';
import { isoOf } from './time.js';

type Schemas = components['schemas'];

/**
 * The version and metadata answer. `version` is the service's release tokenbell answers as, since clients compare
 * it to switch features on; the commit the service names in `revision` is tokenbell's own release here; there is no
 * agent server for Kubernetes, and no enterprise edition.
 */
export function presentInstanceMetadata(gitlabVersion: string, tokenbellVersion: string): Schemas['InstanceMetadata'] {
  return {
    version: gitlabVersion,
    revision: `tokenbell-${tokenbellVersion}`,
    kas: { enabled: false, externalUrl: null, externalK8sProxyUrl: null, version: null },
    enterprise: false,
  };
}

/**
 * The personal access token a request is made with, as the service shows it. Only that token is shown, and the
 * request was authenticated with it, so it is `active` (not revoked, not past its last day). tokenbell keeps no
 * description and does not record use, so both are null rather than invented.
 */
export function presentPersonalAccessToken(token: PersonalAccessTokenRecord): Schemas['PersonalAccessToken'] {
  return {
    id: token.id,
    name: token.name,
    description: null,
    revoked: token.revoked,
    created_at: isoOf(token.created_at),
    scopes: [...token.scopes],
    user_id: token.user_id,
    last_used_at: null,
    active: true,
    expires_at: token.expires_at,
  };
}
