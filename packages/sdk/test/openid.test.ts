// The SDK's OpenID Connect helpers against a real instance (startTokenbell, whose test helpers mint an id_token signed
// by the instance's key): discovery, id_token verification and its refusals, userinfo and its refusals.
import { startTokenbell, type RunningTokenbell } from '@tokenbell/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleOidcApplication } from '../../server/test/support/example-seed.js';
import { exampleSeedPath } from '../../server/test/support/server.js';
import { discover, fetchUserInfo, OAuthError, verifyIdToken } from '../src/index.js';
import { fakeFetch, jsonResponse } from './support.js';

let tokenbell: RunningTokenbell;
beforeAll(async () => {
  tokenbell = await startTokenbell({ seed: exampleSeedPath });
});
afterAll(() => tokenbell?.close());

const mint = (scopes: Array<'openid' | 'email' | 'read_user'>, nonce?: string) =>
  tokenbell.helpers.mintAccessToken({ username: 'jsmith', client_id: exampleOidcApplication.clientId, scopes, ...(nonce ? { nonce } : {}) });

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => (error instanceof OAuthError ? { error: error.error, status: error.status, description: error.error_description } : error),
  );

describe('discover', () => {
  it("reads the instance's discovery document", async () => {
    const document = await discover({ baseUrl: `${tokenbell.url}/` });
    expect(document).toMatchObject({ issuer: tokenbell.url, jwks_uri: `${tokenbell.url}/oauth/discovery/keys`, id_token_signing_alg_values_supported: ['RS256'] });
  });

  it('refuses a document naming another issuer', async () => {
    const { fetch } = fakeFetch(jsonResponse({ issuer: 'https://elsewhere.example', authorization_endpoint: 'x', token_endpoint: 'y', response_types_supported: ['code'] }));
    expect(await refusal(discover({ baseUrl: 'https://gitlab.example', fetch }))).toMatchObject({ error: 'invalid_response', description: expect.stringContaining('elsewhere') });
  });
});

describe('verifyIdToken', () => {
  it('answers the claims of a token signed by the instance, for this client, with this nonce', async () => {
    const { id_token } = await mint(['openid', 'email'], 'sdk-nonce');
    const claims = await verifyIdToken(id_token!, { baseUrl: tokenbell.url, clientId: exampleOidcApplication.clientId, nonce: 'sdk-nonce' });
    expect(claims).toMatchObject({ iss: tokenbell.url, aud: exampleOidcApplication.clientId, nonce: 'sdk-nonce', preferred_username: 'jsmith', email: 'jsmith@example.com' });
  });

  it('refuses another nonce, another audience, another issuer and a changed token', async () => {
    const { id_token } = await mint(['openid'], 'the-nonce');
    const options = { baseUrl: tokenbell.url, clientId: exampleOidcApplication.clientId };
    expect(await refusal(verifyIdToken(id_token!, { ...options, nonce: 'another' }))).toMatchObject({ error: 'invalid_id_token', description: expect.stringContaining('nonce') });
    expect(await refusal(verifyIdToken(id_token!, { ...options, clientId: 'someone-else' }))).toMatchObject({ error: 'invalid_id_token', description: expect.stringContaining('aud') });
    expect(await refusal(verifyIdToken(id_token!, { ...options, baseUrl: 'http://127.0.0.1:1', jwksUri: `${tokenbell.url}/oauth/discovery/keys` }))).toMatchObject({ error: 'invalid_id_token', description: expect.stringContaining('iss') });
    const [header, payload, signature] = id_token!.split('.');
    const changed = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), sub: '999' })).toString('base64url');
    expect(await refusal(verifyIdToken(`${header}.${changed}.${signature}`, options))).toMatchObject({ error: 'invalid_id_token', description: expect.stringContaining('signature') });
  });
});

describe('fetchUserInfo', () => {
  it('answers the claims of the user the token acts for, checking the subject', async () => {
    const { access_token, id_token } = await mint(['openid', 'email']);
    const { sub } = await verifyIdToken(id_token!, { baseUrl: tokenbell.url, clientId: exampleOidcApplication.clientId });
    const info = await fetchUserInfo({ baseUrl: tokenbell.url, accessToken: access_token, expectedSubject: sub });
    expect(info).toMatchObject({ sub, nickname: 'jsmith', email_verified: true, groups: ['acme', 'opensource'] });
    expect(await refusal(fetchUserInfo({ baseUrl: tokenbell.url, accessToken: access_token, expectedSubject: '999' }))).toMatchObject({ error: 'invalid_response' });
  });

  it('throws the OAuth error of a token without openid, and of no valid token', async () => {
    const { access_token } = await mint(['read_user']);
    expect(await refusal(fetchUserInfo({ baseUrl: tokenbell.url, accessToken: access_token }))).toMatchObject({ error: 'insufficient_scope', status: 403 });
    expect(await refusal(fetchUserInfo({ baseUrl: tokenbell.url, accessToken: 'nope' }))).toMatchObject({ error: 'invalid_token', status: 401 });
  });
});
