// Client authentication at the token, revocation and introspection endpoints (RFC 6749 section 2.3.1):
// HTTP Basic (client_secret_basic) or body parameters (client_secret_post), never both.
import type { Storage } from '../storage/index.js';
import type { ApplicationRecord } from '../storage/records.js';
import { authenticateClient, findApplicationByUid, isConfidential } from '../applications.js';
import { OAuthError, invalidClient } from './errors.js';

export interface PresentedClientCredentials {
  /** The Authorization header, if any. */
  authorization?: string | undefined;
  client_id?: string | undefined;
  client_secret?: string | undefined;
}

export const basicChallenge = 'Basic realm="tokenbell"';

function formDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}

/** Parses `Authorization: Basic` as section 2.3.1 says: both parts form-encoded, then base64. */
function parseBasic(header: string): { id: string; secret: string } | 'malformed' | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=._~-]*)\s*$/i.exec(header);
  if (!match) return /^Basic\b/i.test(header) ? 'malformed' : undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  try {
    return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    return 'malformed';
  }
}

/** The client a Basic header names, not authenticated (for matching faults and journal entries); its secret is not kept. */
export function basicClientId(header: string | undefined): string | undefined {
  const parsed = header === undefined ? undefined : parseBasic(header);
  return typeof parsed === 'object' ? parsed.id : undefined;
}

/**
 * The authenticated client, or null when none was presented and `required` is false. Where `publicClients` is set,
 * a public client identifies itself by its client_id alone (RFC 6749 sections 2.3 and 3.2.1, "none" in RFC 8414
 * terms); it has no secret, so any secret sent for it is wrong.
 * Throws `invalid_client` (401) for unknown clients and wrong secrets, and `invalid_request` for two methods at once.
 */
export async function authenticateClientRequest(
  storage: Storage,
  presented: PresentedClientCredentials,
  { required, publicClients = false }: { required: boolean; publicClients?: boolean },
): Promise<ApplicationRecord | null> {
  const basic = presented.authorization ? parseBasic(presented.authorization) : undefined;
  const inBody = presented.client_id !== undefined || presented.client_secret !== undefined;
  const withChallenge = (e: OAuthError) => Object.assign(e, { wwwAuthenticate: basic ? basicChallenge : undefined });
  if (basic === 'malformed') throw withChallenge(invalidClient());
  if (basic && inBody && presented.client_secret !== undefined) {
    throw new OAuthError('invalid_request', 'The client must not use more than one authentication method.');
  }
  if (basic && presented.client_id !== undefined && presented.client_id !== basic.id) throw withChallenge(invalidClient());
  const id = basic ? basic.id : presented.client_id;
  const secret = basic ? basic.secret : presented.client_secret;
  if (id === undefined) {
    if (required) throw invalidClient();
    return null;
  }
  if (secret === undefined || secret === '') {
    const identified = await findApplicationByUid(storage, id);
    if (publicClients && identified && !isConfidential(identified)) return identified;
    throw withChallenge(invalidClient());
  }
  const application = await authenticateClient(storage, id, secret);
  if (!application) throw withChallenge(invalidClient());
  return application;
}
