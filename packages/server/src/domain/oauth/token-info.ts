// GET /oauth/token/info (Doorkeeper's token info, which the service and its clients use): what a live access token
// grants, presented as an API call presents it.
import type { components } from '@tokenbell/sdk';
import type { Store } from '../../store/file-store.js';
import { type PresentedApiCredentials, presentedAccessToken } from '../api-authentication.js';
import { OAuthError } from './errors.js';
import { findActiveAccessToken } from './tokens.js';

export function tokenInfo(store: Store, presented: Omit<PresentedApiCredentials, 'privateToken'>, now: number): components['schemas']['TokenInfo'] {
  const oauth = presentedAccessToken(presented);
  const record = typeof oauth === 'object' ? findActiveAccessToken(store, oauth.token, now) : undefined;
  if (!record) throw new OAuthError('invalid_token', 'The access token is invalid');
  const application = record.application_id === null ? undefined : store.lookup('applications', 'id', record.application_id);
  return {
    resource_owner_id: record.user_id,
    scope: [...record.scopes],
    expires_in: Math.max(0, record.created_at + record.expires_in - now),
    application: application ? { uid: application.uid } : null,
    created_at: record.created_at,
  };
}
