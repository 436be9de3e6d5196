// GET /oauth/token/info (Doorkeeper's token info, which the service and its clients use): what a live access token
// grants, presented as an API call presents it.
import type { components } from '@tokenbell/sdk';
import type { Storage } from '../storage/index.js';
import { type PresentedApiCredentials, presentedAccessToken } from '../api-authentication.js';
import { OAuthError } from './errors.js';
import { findActiveAccessToken } from './tokens.js';

export async function tokenInfo(storage: Storage, presented: Omit<PresentedApiCredentials, 'privateToken'>, now: number): Promise<components['schemas']['TokenInfo']> {
  const oauth = presentedAccessToken(presented);
  const found = typeof oauth === 'object' ? await findActiveAccessToken(storage, oauth.token, now) : undefined;
  if (!found) throw new OAuthError('invalid_token', 'The access token is invalid');
  const { record } = found;
  const application = record.application_id === null ? undefined : await storage.applications.byId(record.application_id);
  return {
    resource_owner_id: record.user_id,
    scope: [...record.scopes],
    expires_in: Math.max(0, record.created_at + record.expires_in - now),
    application: application ? { uid: application.uid } : null,
    created_at: record.created_at,
  };
}
