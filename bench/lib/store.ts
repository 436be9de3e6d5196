// Benchmark stores written straight as StoreData JSON: loading 100k users through the seed would hash 100k passwords
// with scrypt (tens of minutes). Every user shares one precomputed hash; tokens and codes are stored as digests, as
// the server keeps them, and their plain values are returned for the load generator.
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { hashPassword } from '../../packages/server/src/domain/passwords.js';
import { digest } from '../../packages/server/src/domain/secrets.js';
import type { StoreData } from '../../packages/server/src/store/file/schema.js';
import { freshData } from '../../packages/server/src/store/file/read.js';

export const password = 'bench-password-0';
export const project = { id: 1, fullPath: 'bench/app' } as const;
export const client = {
  id: 'benchclient0000000000000000000000',
  secret: `tbcs_${randomBytes(24).toString('hex')}`,
  redirectUri: 'http://127.0.0.1:8080/callback',
} as const;

export interface StoreSpec {
  users: number;
  /** Single-use authorization codes to pre-issue (for the code exchange). */
  codes?: number;
  /** Single-use refresh tokens to pre-issue (for the refresh grant). */
  refreshTokens?: number;
  /** The scopes of every user's access token (`api` by default; the soak adds `openid` for userinfo). */
  accessScopes?: string[];
}

export interface GeneratedStore {
  file: string;
  users: number;
  usernames: string[];
  /** One access token per user, in user order. */
  accessTokens: string[];
  codes: string[];
  refreshTokens: string[];
  bytes: number;
}

let sharedHash: Promise<string> | undefined;
const year = 365 * 24 * 3600;

export async function generateStore(file: string, spec: StoreSpec): Promise<GeneratedStore> {
  sharedHash ??= hashPassword(password);
  const passwordHash = await sharedHash;
  const now = Math.floor(Date.now() / 1000);
  const created = now;
  // A per-run nonce: plain tokens never repeat across runs, as real ones would not.
  const nonce = randomBytes(6).toString('hex');
  // A fresh file's shape (its own session key among it), with the bench's group and client.
  const data: StoreData = {
    ...freshData(),
    sequences: { users: spec.users, groups: 1, projects: 1, applications: 1, personal_access_tokens: 0 },
    groups: [{ id: 1, path: 'bench', name: 'Bench', visibility: 'private', members: [{ user_id: 1, access_level: 50 }], created_at: created }],
    applications: [
      {
        id: 1,
        uid: client.id,
        secret_digest: digest(client.secret),
        name: 'Bench client',
        redirect_uris: [client.redirectUri],
        scopes: ['api', 'read_api', 'read_user'],
        owner_id: 1,
        created_at: created,
      },
    ],
  };
  const { usernames, accessTokens } = addUsers(data, spec.users, passwordHash, nonce, now, spec.accessScopes ?? ['api']);
  // Every user is a member of the one private project, so the visibility check has the whole member list to search.
  data.projects.push({
    id: project.id,
    namespace: 'bench',
    path: 'app',
    name: 'Bench app',
    visibility: 'private',
    group_id: 1,
    members: data.users.map((u) => ({ user_id: u.id, access_level: 30 })),
    created_at: created,
  });
  const codes = addCodes(data, spec, nonce, now);
  const refreshTokens = addRefreshTokens(data, spec, nonce, now);
  const text = JSON.stringify(data);
  await writeFile(file, text, { mode: 0o600 });
  return { file, users: spec.users, usernames, accessTokens, codes, refreshTokens, bytes: Buffer.byteLength(text) };
}

/** One user a number, each with an OAuth access token (stored as its digest); their names and plain tokens. */
function addUsers(data: StoreData, users: number, passwordHash: string, nonce: string, now: number, scopes: string[]): { usernames: string[]; accessTokens: string[] } {
  const usernames: string[] = [];
  const accessTokens: string[] = [];
  for (let id = 1; id <= users; id++) {
    const username = `user${id}`;
    usernames.push(username);
    data.users.push({
      id,
      username,
      email: `${username}@bench.example`,
      secondary_emails: [],
      name: `Bench User ${id}`,
      password_hash: passwordHash,
      two_factor_enabled: false,
      state: 'active',
      is_admin: false,
      bio: '',
      created_at: now,
    });
    const token = `tba_${nonce}u${id}${randomBytes(12).toString('hex')}`;
    accessTokens.push(token);
    data.access_tokens.push({
      id: `at-${id}`,
      token_digest: digest(token),
      refresh_digest: null,
      application_id: 1,
      user_id: id,
      scopes: scopes as StoreData['access_tokens'][number]['scopes'],
      created_at: now,
      expires_in: year,
      revoked_at: null,
      code_id: null,
    });
  }
  return { usernames, accessTokens };
}

/** Single-use authorization codes for the code exchange, spread over the users; their plain values. */
function addCodes(data: StoreData, spec: StoreSpec, nonce: string, now: number): string[] {
  const codes: string[] = [];
  for (let i = 0; i < (spec.codes ?? 0); i++) {
    const code = `${nonce}c${i}${randomBytes(12).toString('hex')}`;
    codes.push(code);
    data.authorization_codes.push({
      id: `code-${i}`,
      code_digest: digest(code),
      application_id: 1,
      user_id: (i % spec.users) + 1,
      redirect_uri: client.redirectUri,
      scopes: ['api'],
      code_challenge: null,
      code_challenge_method: null,
      created_at: now,
      expires_at: now + year,
      used_at: null,
    });
  }
  return codes;
}

/** Single-use refresh tokens for the refresh grant, spread over the users; their plain values. */
function addRefreshTokens(data: StoreData, spec: StoreSpec, nonce: string, now: number): string[] {
  const refreshTokens: string[] = [];
  for (let i = 0; i < (spec.refreshTokens ?? 0); i++) {
    const refresh = `tbr_${nonce}r${i}${randomBytes(12).toString('hex')}`;
    refreshTokens.push(refresh);
    data.access_tokens.push({
      id: `rt-${i}`,
      token_digest: digest(`tba_${nonce}r${i}${randomBytes(12).toString('hex')}`),
      refresh_digest: digest(refresh),
      application_id: 1,
      user_id: (i % spec.users) + 1,
      scopes: ['api'],
      created_at: now,
      expires_in: 7200,
      revoked_at: null,
      code_id: null,
    });
  }
  return refreshTokens;
}
