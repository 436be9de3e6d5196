// The userinfo endpoint (OpenID Connect Core 1.0 section 5.3): the claims of the user an access token acts for, when
// its grant holds `openid`. Errors as RFC 6750 section 3 has them: no token → 401 with a bare challenge; a bad one →
// 401 `invalid_token`; one without `openid` → 403 `insufficient_scope`.
import type { components } from '@tokenbell/sdk';
import type { Storage } from '../storage/index.js';
import { type PresentedApiCredentials, presentedAccessToken } from '../api-authentication.js';
import { OAuthError } from '../oauth/errors.js';
import { findActiveAccessToken } from '../oauth/tokens.js';
import { type ClaimSettings, userInfoClaims } from './claims.js';

const realm = 'Bearer realm="tokenbell"';

const challenged = (error: OAuthError, challenge: string) => Object.assign(error, { wwwAuthenticate: challenge });

export async function userInfo(
  storage: Storage,
  presented: Omit<PresentedApiCredentials, 'privateToken'>,
  now: number,
  settings: ClaimSettings,
): Promise<components['schemas']['UserInfo']> {
  const oauth = presentedAccessToken(presented);
  const invalid = new OAuthError('invalid_token', 'The access token is invalid');
  // A request without credentials learns only the scheme (RFC 6750 section 3.1: no error code then).
  if (oauth === 'missing') throw challenged(invalid, realm);
  const found = oauth === 'invalid' ? undefined : await findActiveAccessToken(storage, oauth.token, now);
  if (!found) throw challenged(invalid, `${realm}, error="invalid_token"`);
  if (!found.record.scopes.includes('openid')) {
    throw challenged(
      new OAuthError('insufficient_scope', 'The request requires higher privileges than provided by the access token.', { status: 403 }),
      `${realm}, error="insufficient_scope", scope="openid"`,
    );
  }
  return userInfoClaims(storage, found.user, found.record.scopes, settings);
}
