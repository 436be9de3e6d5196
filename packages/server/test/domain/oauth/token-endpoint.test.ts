// The token endpoint's three grants as plain functions on a memory storage: what each issues, and each refusal with
// its exact error (test/http/token-endpoint.test.ts drives the same over HTTP, with client authentication).
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { registerApplication } from '../../../src/domain/applications.js';
import { hashPassword } from '../../../src/domain/passwords.js';
import { digest, newSecret } from '../../../src/domain/secrets.js';
import { invalidGrant } from '../../../src/domain/oauth/errors.js';
import { answerDeviceAuthorization, startDeviceAuthorization } from '../../../src/domain/oauth/device-authorization.js';
import {
  type GrantContext,
  deviceCodeGrant,
  exchangeAuthorizationCode,
  invalidCredentialsDescription,
  passwordGrant,
  refreshGrant,
} from '../../../src/domain/oauth/token-endpoint.js';
import { newTokenPair } from '../../../src/domain/oauth/tokens.js';
import type { Storage } from '../../../src/domain/storage/index.js';
import type { ApplicationRecord, AuthorizationCodeRecord, Scope, UserRecord } from '../../../src/domain/storage/records.js';
import { StoreBuilder, oauthRefusal, tokenResponse } from '../fixtures.js';

const now = 1_800_000_000;
const tokenTtl = 7200;
const password = 'correct horse battery staple';
const redirect_uri = 'https://app.example.com/callback';
// RFC 7636 appendix B.
const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

const pkceMismatch = 'The PKCE code_verifier does not match the code_challenge of the authorization request.';
const verifierWithoutChallenge = 'A code_verifier was sent but the authorization request had no code_challenge.';

let passwordHash: string;
beforeAll(async () => {
  passwordHash = await hashPassword(password);
});

let storage: Storage;
let jane: UserRecord;
let blocked: UserRecord;
let twoFactor: UserRecord;
/** Confidential, every scope. */
let app: ApplicationRecord;
/** Another confidential client, for codes and tokens that are not its own. */
let other: ApplicationRecord;
/** Public (no secret): PKCE or nothing. */
let spa: ApplicationRecord;
beforeEach(async () => {
  const builder = new StoreBuilder();
  jane = builder.user('jane', { password_hash: passwordHash });
  blocked = builder.user('blocked', { password_hash: passwordHash, state: 'blocked' });
  twoFactor = builder.user('awong', { password_hash: passwordHash, two_factor_enabled: true });
  storage = builder.storage();
  const register = async (name: string, scopes: Scope[], confidential: boolean) =>
    (await registerApplication(storage, jane.id, { name, redirect_uris: [redirect_uri], scopes, confidential })).record;
  app = await register('App', ['api', 'read_api', 'read_user'], true);
  other = await register('Other', ['api'], true);
  spa = await register('SPA', ['api'], false);
});

const ctx = <C extends ApplicationRecord | null>(client: C, at = now): GrantContext & { client: C } => ({ storage, client, now: at, tokenTtl });

let codes = 0;
/** Stores an authorization code for jane and `app` as the authorization endpoint would; answers the plain code. */
async function issueCode(change: Partial<AuthorizationCodeRecord> = {}): Promise<string> {
  const code = newSecret('authorizationCode');
  await storage.codes.create({
    id: `code-${++codes}`,
    code_digest: digest(code),
    application_id: app.id,
    user_id: jane.id,
    redirect_uri,
    scopes: ['api', 'read_user'],
    code_challenge: null,
    code_challenge_method: null,
    created_at: now,
    expires_at: now + 600,
    used_at: null,
    ...change,
  });
  return code;
}

const exchange = (code: string, extra: { redirect_uri?: string; code_verifier?: string } = {}, client: ApplicationRecord = app, at = now) =>
  exchangeAuthorizationCode(ctx(client, at), { grant_type: 'authorization_code', code, redirect_uri, ...extra }).then((issued) => issued.response);

const refresh = (refresh_token: string, scope?: string, client: ApplicationRecord = app, at = now) =>
  refreshGrant(ctx(client, at), { grant_type: 'refresh_token', refresh_token, ...(scope === undefined ? {} : { scope }) }).then((issued) => issued.response);

const passwordFor = (username: string, pass: string, scope?: string, client: ApplicationRecord | null = null) =>
  passwordGrant(ctx(client), { grant_type: 'password', username, password: pass, ...(scope === undefined ? {} : { scope }) }).then((issued) => issued.response);

const grantRefused = { status: 400, code: 'invalid_grant', description: invalidGrant().description };
const scopeRefused = { status: 400, code: 'invalid_scope', description: 'The requested scope is invalid, unknown, malformed, or exceeds the scope granted.' };
const stored = (token: string) => storage.tokens.byAccessDigest(digest(token));

describe('exchangeAuthorizationCode', () => {
  it('issues a bearer pair with a refresh token and the code’s scopes, stored in the code’s chain', async () => {
    const issued = await exchange(await issueCode());
    expect(issued).toEqual(tokenResponse({ scope: 'api read_user', expires_in: tokenTtl, created_at: now, refresh: true }));
    expect(await stored(issued.access_token)).toMatchObject({
      refresh_digest: digest(issued.refresh_token!),
      application_id: app.id,
      user_id: jane.id,
      scopes: ['api', 'read_user'],
      created_at: now,
      expires_in: tokenTtl,
      revoked_at: null,
      code_id: `code-${codes}`,
    });
  });

  it('refuses a code from its expiry on (a second before, it is good)', async () => {
    expect(await oauthRefusal(exchange(await issueCode({ expires_at: now })))).toEqual(grantRefused);
    await expect(exchange(await issueCode({ expires_at: now + 1 }))).resolves.toMatchObject({ scope: 'api read_user' });
  });

  it('refuses a redirect URI other than the authorization request’s, and burns nothing doing so', async () => {
    const code = await issueCode();
    expect(await oauthRefusal(exchange(code, { redirect_uri: 'https://app.example.com/other' }))).toEqual(grantRefused);
    expect(await oauthRefusal(exchange(code, { redirect_uri: `${redirect_uri}/` }))).toEqual(grantRefused);
    await expect(exchange(code)).resolves.toMatchObject({ token_type: 'bearer' });
  });

  it('refuses another client’s code as unknown, leaving it to its client', async () => {
    const code = await issueCode();
    expect(await oauthRefusal(exchange(code, {}, other))).toEqual(grantRefused);
    await expect(exchange(code)).resolves.toMatchObject({ token_type: 'bearer' });
  });

  describe('PKCE', () => {
    it('exchanges the code for the verifier of its challenge', async () => {
      const code = await issueCode({ code_challenge: challenge, code_challenge_method: 'S256' });
      await expect(exchange(code, { code_verifier: verifier })).resolves.toMatchObject({ scope: 'api read_user' });
    });

    it('refuses a wrong verifier, and a missing one, when the request had a challenge', async () => {
      const code = await issueCode({ code_challenge: challenge, code_challenge_method: 'S256' });
      expect(await oauthRefusal(exchange(code, { code_verifier: `${verifier.slice(0, -1)}j` }))).toEqual({ status: 400, code: 'invalid_grant', description: pkceMismatch });
      expect(await oauthRefusal(exchange(code))).toEqual({ status: 400, code: 'invalid_grant', description: pkceMismatch });
    });

    it('refuses a verifier when the request had no challenge (a downgrade)', async () => {
      expect(await oauthRefusal(exchange(await issueCode(), { code_verifier: verifier }))).toEqual({ status: 400, code: 'invalid_grant', description: verifierWithoutChallenge });
    });

    it('refuses a public client’s code without a challenge, and exchanges one with a challenge', async () => {
      const bare = await issueCode({ application_id: spa.id });
      expect(await oauthRefusal(exchange(bare, {}, spa))).toEqual(grantRefused);
      expect(await oauthRefusal(exchange(bare, { code_verifier: verifier }, spa))).toEqual(grantRefused);
      const protectedCode = await issueCode({ application_id: spa.id, code_challenge: challenge, code_challenge_method: 'S256' });
      await expect(exchange(protectedCode, { code_verifier: verifier }, spa)).resolves.toMatchObject({ token_type: 'bearer' });
    });
  });

  it('refuses the code of a blocked user', async () => {
    expect(await oauthRefusal(exchange(await issueCode({ user_id: blocked.id })))).toEqual(grantRefused);
  });

  it('treats a used code as leaked: refused, and every pair issued from it is revoked', async () => {
    const code = await issueCode();
    const first = await exchange(code);
    const rotated = await refresh(first.refresh_token!, undefined, app, now + 10);
    expect(await oauthRefusal(exchange(code, {}, app, now + 20))).toEqual(grantRefused);
    expect((await stored(first.access_token))?.revoked_at).toBe(now + 10);
    expect((await stored(rotated.access_token))?.revoked_at).toBe(now + 20);
    expect(await oauthRefusal(refresh(rotated.refresh_token!, undefined, app, now + 30))).toEqual(grantRefused);
  });
});

describe('refreshGrant', () => {
  it('rotates: a new pair with the same scopes, and the old pair revoked', async () => {
    const first = await exchange(await issueCode());
    const second = await refresh(first.refresh_token!, undefined, app, now + 60);
    expect(second).toEqual(tokenResponse({ scope: 'api read_user', expires_in: tokenTtl, created_at: now + 60, refresh: true }));
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(await stored(first.access_token)).toMatchObject({ revoked_at: now + 60 });
    expect(await stored(second.access_token)).toMatchObject({ revoked_at: null, created_at: now + 60, code_id: `code-${codes}` });
  });

  it('treats a rotated refresh token coming back as leaked: refused, and the chain ended', async () => {
    const first = await exchange(await issueCode());
    const second = await refresh(first.refresh_token!);
    expect(await oauthRefusal(refresh(first.refresh_token!, undefined, app, now + 5))).toEqual(grantRefused);
    expect(await stored(second.access_token)).toMatchObject({ revoked_at: now + 5 });
  });

  it('narrows along api ⊇ read_api ⊇ read_user, and refuses widening with invalid_scope, burning nothing', async () => {
    const issued = await exchange(await issueCode({ scopes: ['api'] }));
    const readApi = await refresh(issued.refresh_token!, 'read_api');
    expect(readApi.scope).toBe('read_api');
    expect(await oauthRefusal(refresh(readApi.refresh_token!, 'api'))).toEqual(scopeRefused);
    expect(await oauthRefusal(refresh(readApi.refresh_token!, 'read_api admin'))).toEqual(scopeRefused);
    const readUser = await refresh(readApi.refresh_token!, 'read_user');
    expect(readUser.scope).toBe('read_user');
    expect(await oauthRefusal(refresh(readUser.refresh_token!, 'read_api'))).toEqual(scopeRefused);
    // A blank scope keeps what the refresh token had.
    expect((await refresh(readUser.refresh_token!, ' ')).scope).toBe('read_user');
  });

  it('refuses the refresh token of a blocked user, revoking nothing', async () => {
    // A pair issued before the block, stored as a grant stores it.
    const { pair, response } = newTokenPair({ user_id: blocked.id, application_id: app.id, scopes: ['api'], withRefreshToken: true, now, ttl: tokenTtl });
    await storage.tokens.issue(pair);
    expect(await oauthRefusal(refresh(response.refresh_token!))).toEqual(grantRefused);
    expect(await stored(response.access_token)).toMatchObject({ revoked_at: null });
  });

  it('refuses another client’s refresh token as unknown, leaving it to its client', async () => {
    const issued = await exchange(await issueCode());
    expect(await oauthRefusal(refresh(issued.refresh_token!, undefined, other))).toEqual(grantRefused);
    await expect(refresh(issued.refresh_token!)).resolves.toMatchObject({ token_type: 'bearer' });
  });
});

describe('passwordGrant', () => {
  it('issues an access token without a refresh token, outside any chain; api by default without a client', async () => {
    const issued = await passwordFor('jane', password);
    expect(issued).toEqual(tokenResponse({ scope: 'api', expires_in: tokenTtl, created_at: now, refresh: false }));
    expect(await stored(issued.access_token)).toMatchObject({ refresh_digest: null, application_id: null, user_id: jane.id, scopes: ['api'], code_id: null });
    expect((await passwordFor('jane@example.com', password, 'read_user')).scope).toBe('read_user');
  });

  it('with a client, grants the client’s scopes by default and what they include on request', async () => {
    expect((await passwordFor('jane', password, undefined, other)).scope).toBe('api');
    expect((await passwordFor('jane', password, 'read_user read_api', other)).scope).toBe('read_user read_api');
    const issued = await passwordFor('jane', password, undefined, app);
    expect(issued.scope).toBe('api read_api read_user');
    expect(await stored(issued.access_token)).toMatchObject({ application_id: app.id });
  });

  it('refuses a scope beyond the client’s, or unknown, with invalid_scope', async () => {
    const readOnly = (await registerApplication(storage, jane.id, { name: 'Reader', redirect_uris: [redirect_uri], scopes: ['read_api'] })).record;
    expect(await oauthRefusal(passwordFor('jane', password, 'api', readOnly))).toEqual(scopeRefused);
    expect(await oauthRefusal(passwordFor('jane', password, 'write_api'))).toEqual(scopeRefused);
  });

  it('answers a wrong password, an unknown login, a blocked account and a two-factor account alike, issuing nothing', async () => {
    const refused = { status: 400, code: 'invalid_grant', description: invalidCredentialsDescription };
    expect(invalidCredentialsDescription).toBe(
      'Invalid username or password. Accounts with two-factor authentication cannot use the password grant: use a personal access token.',
    );
    expect(await oauthRefusal(passwordFor('jane', 'not the password'))).toEqual(refused);
    expect(await oauthRefusal(passwordFor('nobody', password))).toEqual(refused);
    expect(await oauthRefusal(passwordFor('blocked', password))).toEqual(refused);
    expect(await oauthRefusal(passwordFor('awong', password))).toEqual(refused);
    for (const user of [jane, blocked, twoFactor]) expect(await storage.tokens.unrevokedOfUser(user.id)).toEqual([]);
  });
});

describe('deviceCodeGrant (RFC 8628 section 3.4)', () => {
  const device = async (client: ApplicationRecord = spa) => startDeviceAuthorization(storage, client, {}, { baseUrl: 'https://tokenbell.example', now, expiresIn: 300, interval: 5, pendingPerClient: 100 });
  const answer = (userCode: string, user: UserRecord, decision: 'approve' | 'deny' = 'approve') => answerDeviceAuthorization(storage, userCode, { user_id: user.id, decision, auth_time: now - 600 }, now);
  const poll = (deviceCode: string, client: ApplicationRecord = spa, at = now) => deviceCodeGrant(ctx(client, at), { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: deviceCode });

  it('issues a pair with a refresh token, in the device authorization\'s chain, and says for whom, to what and since when', async () => {
    const { device_code, user_code } = await device();
    await answer(user_code, jane);
    const issued = await poll(device_code, spa, now + 5);
    expect(issued).toEqual({
      response: tokenResponse({ scope: 'api', expires_in: tokenTtl, created_at: now + 5, refresh: true }),
      issuedFor: { user_id: jane.id, application: spa, scopes: ['api'], nonce: null, auth_time: now - 600 },
    });
    const record = await stored(issued.response.access_token);
    expect(record).toMatchObject({ application_id: spa.id, user_id: jane.id, code_id: expect.any(String), auth_time: now - 600 });
    // Its refresh token rotates like a code's.
    await expect(refresh(issued.response.refresh_token!, undefined, spa, now + 6)).resolves.toMatchObject({ scope: 'api' });
  });

  it('answers the device authorization\'s state while it is not redeemed, and invalid_grant once it is', async () => {
    const { device_code, user_code } = await device();
    expect(await oauthRefusal(poll(device_code))).toMatchObject({ status: 400, code: 'authorization_pending' });
    expect(await oauthRefusal(poll(device_code))).toMatchObject({ status: 400, code: 'slow_down' });
    await answer(user_code, jane);
    await poll(device_code, spa, now + 1);
    expect(await oauthRefusal(poll(device_code, spa, now + 10))).toEqual(grantRefused);
  });

  it('refuses another client\'s device code, an unknown one, and one approved by a user blocked since', async () => {
    const { device_code, user_code } = await device();
    await answer(user_code, jane);
    expect(await oauthRefusal(poll(device_code, app))).toEqual(grantRefused);
    expect(await oauthRefusal(poll('tbdc_unknown'))).toEqual(grantRefused);
    const byBlocked = await device();
    await answer(byBlocked.user_code, blocked);
    expect(await oauthRefusal(poll(byBlocked.device_code))).toEqual(grantRefused);
    await expect(poll(device_code)).resolves.toMatchObject({ issuedFor: { user_id: jane.id } });
  });

  it('answers access_denied after a denial and expired_token after expires_in', async () => {
    const denied = await device();
    await answer(denied.user_code, jane, 'deny');
    expect(await oauthRefusal(poll(denied.device_code))).toMatchObject({ code: 'access_denied', description: 'The user denied the request.' });
    const late = await device();
    expect(await oauthRefusal(poll(late.device_code, spa, now + 300))).toMatchObject({ code: 'expired_token' });
  });
});
