// The records the domain reads and the stores keep, one shape for every backend (the JSON file holds them as they are;
// PostgreSQL's rows map onto them). Secrets (passwords, tokens, codes, client secrets) appear only as digests:
// passwords as scrypt hashes, random high-entropy values as SHA-256 hex digests (see domain/secrets.ts).
import type { components } from '@tokenbell/sdk';

type Schemas = components['schemas'];
export type NotificationLevel = Schemas['NotificationLevel'];
export type NotificationEvent = Schemas['NotificationEvent'];
export type NotificationEvents = Schemas['NotificationEvents'];
export type Visibility = 'private' | 'internal' | 'public';
import type { ApiScope, Scope } from '../../openapi/document.js';

export type { ApiScope, Scope };

/** Seconds since the Unix epoch: every stored time, as the token endpoint reports `created_at`. */
export type EpochSeconds = number;

export interface UserRecord {
  readonly id: number;
  readonly username: string;
  /** The primary address: the one the user signs in with and mail goes to unless they chose another of their own. */
  readonly email: string;
  /**
   * Verified secondary addresses, in the order given (tokenbell has no verification flow: only verified ones are
   * stored). With `email`, the addresses the user owns; no address belongs to two users. Files written before the
   * field existed read as none (upgrade.ts).
   */
  readonly secondary_emails: readonly string[];
  readonly name: string;
  /** `scrypt$N$r$p$salt$hash`, never the password. */
  readonly password_hash: string;
  readonly two_factor_enabled: boolean;
  /**
   * The base32 TOTP secret of a user with two-factor authentication. Unlike every other secret it is kept as is:
   * checking a code needs the key itself. Absent on users without it (and in files written before it existed).
   */
  readonly otp_secret?: string | null;
  /** The time step of the last code accepted, so no code works twice. */
  readonly otp_last_step?: number | null;
  readonly state: 'active' | 'blocked';
  readonly is_admin: boolean;
  readonly bio: string;
  readonly created_at: EpochSeconds;
}

export interface Membership {
  readonly user_id: number;
  /** 10 guest, 20 reporter, 30 developer, 40 maintainer, 50 owner (as the hosted service numbers them). */
  readonly access_level: number;
}

export interface GroupRecord {
  readonly id: number;
  /** The group's path, unique, e.g. `acme`. */
  readonly path: string;
  readonly name: string;
  readonly visibility: Visibility;
  readonly members: readonly Membership[];
  readonly created_at: EpochSeconds;
}

export interface ProjectRecord {
  readonly id: number;
  /** The owning group's path or user's username; the project's full path is `namespace/path`. */
  readonly namespace: string;
  readonly path: string;
  readonly name: string;
  readonly visibility: Visibility;
  /** The group the project belongs to, or null for a project in a user's namespace. */
  readonly group_id: number | null;
  readonly members: readonly Membership[];
  readonly created_at: EpochSeconds;
}

export interface ApplicationRecord {
  readonly id: number;
  /** The App ID, sent as client_id. */
  readonly uid: string;
  /** SHA-256 hex digest of the App Secret; null for a public client, which has none. */
  readonly secret_digest: string | null;
  /**
   * False for a public client (a browser or native app that cannot keep a secret, RFC 6749 section 2.1): it
   * identifies itself by client_id alone and must use PKCE. Absent in records stored before the choice existed,
   * which were all confidential.
   */
  readonly confidential?: boolean;
  readonly name: string;
  readonly redirect_uris: readonly string[];
  readonly scopes: readonly Scope[];
  readonly owner_id: number;
  readonly created_at: EpochSeconds;
}

export interface PersonalAccessTokenRecord {
  readonly id: number;
  readonly user_id: number;
  readonly name: string;
  readonly token_digest: string;
  readonly scopes: readonly ApiScope[];
  readonly created_at: EpochSeconds;
  /** Last day of validity (YYYY-MM-DD), or null for no expiry. */
  readonly expires_at: string | null;
  readonly revoked: boolean;
}

/** An authorization code (RFC 6749 section 4.1.2), single-use and short-lived. */
export interface AuthorizationCodeRecord {
  readonly id: string;
  readonly code_digest: string;
  readonly application_id: number;
  readonly user_id: number;
  readonly redirect_uri: string;
  readonly scopes: readonly Scope[];
  readonly code_challenge: string | null;
  readonly code_challenge_method: 'S256' | null;
  readonly created_at: EpochSeconds;
  readonly expires_at: EpochSeconds;
  /** Set when the code is exchanged; a second exchange revokes every token issued from it. */
  readonly used_at: EpochSeconds | null;
  /** The OpenID Connect `nonce` of the authorization request, for its id_token; absent in codes made before OIDC. */
  readonly nonce?: string | null;
  /** When the user signed in to the pages that approved it (the id_token's `auth_time`). */
  readonly auth_time?: EpochSeconds | null;
}

/** An OAuth access token and, for the code and refresh grants, its refresh token. */
export interface AccessTokenRecord {
  readonly id: string;
  readonly token_digest: string;
  readonly refresh_digest: string | null;
  /** Null for a password grant without client authentication. */
  readonly application_id: number | null;
  readonly user_id: number;
  readonly scopes: readonly Scope[];
  readonly created_at: EpochSeconds;
  readonly expires_in: number;
  readonly revoked_at: EpochSeconds | null;
  /**
   * The authorization code (or device authorization) the chain started from, so a replayed code or refresh token
   * revokes all of it.
   */
  readonly code_id: string | null;
  /**
   * When the user last authenticated for this grant (the id_token's `auth_time`), kept along the refresh chain;
   * absent in pairs stored before OIDC.
   */
  readonly auth_time?: EpochSeconds | null;
}

/**
 * A device authorization (RFC 8628): asked for by a device, answered once by a user on the verification page, then
 * redeemed once by the device's poll. Both codes are kept as digests only (the user code of its normalised form).
 */
export interface DeviceGrantRecord {
  readonly id: string;
  readonly device_code_digest: string;
  readonly user_code_digest: string;
  readonly application_id: number;
  readonly scopes: readonly Scope[];
  readonly created_at: EpochSeconds;
  readonly expires_at: EpochSeconds;
  /** The least number of seconds between two polls (section 3.2 `interval`). */
  readonly interval: number;
  /** When the device last polled and was told to keep waiting; a poll refused as too early leaves it. */
  readonly last_polled_at: EpochSeconds | null;
  /** Null until a user answers. */
  readonly decision: 'approved' | 'denied' | null;
  /** The user who answered. */
  readonly user_id: number | null;
  readonly decided_at: EpochSeconds | null;
  /** When the user who approved had signed in (OpenID Connect's auth_time); null until approved. */
  readonly auth_time: EpochSeconds | null;
  /** Set when the poll that got the tokens redeemed it: the device code is spent. */
  readonly redeemed_at: EpochSeconds | null;
}

/** One user's setting for one source: global (source_id null), a group or a project. */
export interface NotificationSettingRecord {
  readonly user_id: number;
  readonly source_type: 'global' | 'group' | 'project';
  readonly source_id: number | null;
  readonly level: NotificationLevel;
  /** Global settings only; null means the account's e-mail. */
  readonly notification_email: string | null;
  /** Kept whatever the level, shown only when the level is `custom`. */
  readonly events: NotificationEvents;
}

export interface SessionRecord {
  /** The SHA-256 digest of the session id, never the id itself: the id in the cookie is a bearer credential. */
  readonly sid_digest: string;
  /** express-session's serialised session. */
  readonly session: Record<string, unknown>;
  readonly expires_at: EpochSeconds;
}

/** An event notification mail was sent for (spec 2.6; events enter through the test-helper surface). */
export interface NotificationEventRecord {
  readonly id: string;
  readonly kind: NotificationEvent;
  readonly project_id: number;
  readonly author_id: number;
  readonly title: string;
  readonly created_at: EpochSeconds;
}

/**
 * One notification mail in the outbox: written with its event, then delivered by a worker that claims it for a
 * while (`claimed_until`), so a worker that dies mid-send leaves it to be claimed again once the claim runs out.
 */
export interface OutboxMessageRecord {
  readonly id: string;
  readonly event_id: string;
  readonly user_id: number;
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  /** Message-ID, List-Id, the reason header and the like, as sent. */
  readonly headers: Readonly<Record<string, string>>;
  readonly status: 'queued' | 'sent' | 'failed';
  readonly attempts: number;
  readonly next_attempt_at: EpochSeconds;
  readonly claimed_until: EpochSeconds | null;
  /** Why the last attempt failed, or why delivery gave up. */
  readonly last_error: string | null;
  readonly created_at: EpochSeconds;
  readonly sent_at: EpochSeconds | null;
}

/**
 * A key that signs OpenID Connect id_tokens (RS256), made by tokenbell and kept by the store so that every instance
 * on it signs with the same one. Like the TOTP secret it is kept as is: signing needs the private key itself.
 */
export interface SigningKeyRecord {
  /** The RFC 7638 JWK SHA-256 thumbprint of the public key, base64url: the `kid` of the JWK set and of id_tokens. */
  readonly kid: string;
  /** The RSA private key, PKCS#8 PEM. Never answered, logged or put in an error message. */
  readonly private_key: string;
  /** The public key's JWK members, as the JWK set publishes them. */
  readonly public_jwk: { readonly kty: 'RSA'; readonly n: string; readonly e: string };
  readonly created_at: EpochSeconds;
  /**
   * When it starts to sign: its creation for the store's first key and after `keys rotate --drop-retired`, otherwise
   * the JWK set's cache lifetime after it (until then it is the next key, published but not signing).
   */
  readonly signs_from: EpochSeconds;
  /**
   * When it stops signing: set by the rotation that made the key after it, to that key's `signs_from` (so it may be
   * ahead of the clock); null for the newest key (there is at most one).
   */
  readonly retired_at: EpochSeconds | null;
}
