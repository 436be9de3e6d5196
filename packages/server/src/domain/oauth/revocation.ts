// Token revocation (RFC 7009) and introspection (RFC 7662).
import type { components } from '@tokenbell/sdk';
import type { Storage } from '../storage/index.js';
import type { AccessTokenRecord, ApplicationRecord } from '../storage/records.js';
import { digest } from '../secrets.js';
import { OAuthError } from './errors.js';
import { formatScope } from './scopes.js';
import { isExpired } from './tokens.js';
import { activeUser } from '../users.js';
import { isConfidential } from '../applications.js';

type Hint = string | undefined;

/** Finds the record of an access or refresh token, trying the hinted kind first (RFC 7009 section 2.1). */
async function findEitherToken(storage: Storage, token: string, hint: Hint): Promise<{ record: AccessTokenRecord; kind: 'access_token' | 'refresh_token' } | undefined> {
  const d = digest(token);
  const order = hint === 'refresh_token' ? (['refresh_token', 'access_token'] as const) : (['access_token', 'refresh_token'] as const);
  for (const kind of order) {
    const record = await (kind === 'access_token' ? storage.tokens.byAccessDigest(d) : storage.tokens.byRefreshDigest(d));
    if (record) return { record, kind };
  }
  return undefined;
}

/**
 * RFC 7009 section 2.1: revokes the token and the other member of its pair. Unknown or already invalid tokens are
 * answered as success (section 2.2); a token of another client is refused (`unauthorized_client`).
 *
 * Without client authentication only a token issued without a client (the anonymous password grant) can be
 * revoked, by whoever presents it; it could be tried at the API anyway. Every other token, unknown or issued to a
 * client, is answered as an unknown one (success, nothing revoked): any answer that differed would tell an
 * unauthenticated caller a live token from a made-up one. A public client names itself by its client_id alone,
 * which anyone can send, so it is answered the same way for a token of another client.
 */
export async function revokeToken(
  storage: Storage,
  client: ApplicationRecord | null,
  params: { token: string; token_type_hint?: string | undefined },
  now: number,
): Promise<void> {
  const found = await findEitherToken(storage, params.token, params.token_type_hint);
  if (!found || found.record.revoked_at !== null) return;
  const { record } = found;
  if (record.application_id !== null && record.application_id !== client?.id) {
    if (client === null || !isConfidential(client)) return;
    throw new OAuthError('unauthorized_client', 'The token was issued to another client; only that client may revoke it.');
  }
  await storage.tokens.revoke(record.id, now);
}

export type IntrospectionResponse = components['schemas']['IntrospectionResponse'];

/**
 * RFC 7662 section 2.2: an unusable token shows `active: false` and nothing else. Section 4: a client learns about
 * the tokens issued to it only, unless the instance lets it introspect every token (a resource server, named in
 * `--introspection-clients`); any other token looks exactly like an unknown one.
 */
export async function introspectToken(
  storage: Storage,
  client: ApplicationRecord,
  params: { token: string; token_type_hint?: string | undefined },
  now: number,
  { introspectsEveryToken }: { introspectsEveryToken: (client: ApplicationRecord) => boolean },
): Promise<IntrospectionResponse> {
  const found = await findEitherToken(storage, params.token, params.token_type_hint);
  if (!found || found.record.revoked_at !== null) return { active: false };
  const { record, kind } = found;
  if (record.application_id !== client.id && !introspectsEveryToken(client)) return { active: false };
  if (kind === 'access_token' && isExpired(record, now)) return { active: false };
  const user = await activeUser(storage.users, record.user_id);
  if (!user) return { active: false };
  const application = record.application_id === null ? undefined : await storage.applications.byId(record.application_id);
  return {
    active: true,
    scope: formatScope(record.scopes),
    client_id: application?.uid ?? null,
    username: user.username,
    token_type: kind === 'access_token' ? 'Bearer' : 'refresh_token',
    ...(kind === 'access_token' ? { exp: record.created_at + record.expires_in } : {}),
    iat: record.created_at,
    sub: String(user.id),
  };
}
