// Client authentication at the token, revocation and introspection endpoints (client-authentication.ts): HTTP Basic
// or body parameters, never both; a public client by its client_id alone where the endpoint allows it.
import { beforeEach, describe, expect, it } from 'vitest';
import { registerApplication } from '../../../src/domain/applications.js';
import { authenticateClientRequest, basicChallenge, type PresentedClientCredentials } from '../../../src/domain/oauth/client-authentication.js';
import type { ApplicationRecord } from '../../../src/domain/storage/records.js';
import type { Storage } from '../../../src/domain/storage/index.js';
import { StoreBuilder, oauthRefusal } from '../fixtures.js';

// Characters that Basic must form-encode (RFC 6749 section 2.3.1): a colon in the id, a plus and a percent sign in
// the secret.
const uid = 'app:1';
const secret = 'tbcs_plus+and%percent';
const basic = (id: string, pass: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(pass)}`).toString('base64')}`;

let storage: Storage;
let app: ApplicationRecord;
let spa: ApplicationRecord;
beforeEach(async () => {
  const builder = new StoreBuilder();
  const owner = builder.user('jane');
  storage = builder.storage();
  app = (await registerApplication(storage, owner.id, { name: 'App', redirect_uris: ['https://app.example.com/cb'], uid, secret })).record;
  spa = (await registerApplication(storage, owner.id, { name: 'SPA', redirect_uris: ['https://spa.example.com/cb'], uid: 'spa', confidential: false })).record;
});

const authenticate = (presented: PresentedClientCredentials, options: { required: boolean; publicClients?: boolean } = { required: true }) =>
  authenticateClientRequest(storage, presented, options);

const invalidClient = {
  status: 401,
  code: 'invalid_client',
  description: 'Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.',
};

describe('authenticateClientRequest', () => {
  it('authenticates a confidential client by form-encoded HTTP Basic or by body parameters', async () => {
    expect(await authenticate({ authorization: basic(uid, secret) })).toEqual(app);
    expect(await authenticate({ client_id: uid, client_secret: secret })).toEqual(app);
    // The body may repeat the id Basic gives.
    expect(await authenticate({ authorization: basic(uid, secret), client_id: uid })).toEqual(app);
  });

  it('answers null when no client is presented and none is required, invalid_client when one is', async () => {
    expect(await authenticate({}, { required: false })).toBeNull();
    expect(await oauthRefusal(authenticate({}))).toEqual(invalidClient);
  });

  it('refuses a wrong secret, an unknown client and a missing secret, with a Basic challenge when Basic was used', async () => {
    expect(await oauthRefusal(authenticate({ client_id: uid, client_secret: 'tbcs_wrong' }))).toEqual(invalidClient);
    expect(await oauthRefusal(authenticate({ client_id: 'nobody', client_secret: secret }))).toEqual(invalidClient);
    expect(await oauthRefusal(authenticate({ client_id: uid }))).toEqual(invalidClient);
    await expect(authenticate({ authorization: basic(uid, 'tbcs_wrong') })).rejects.toMatchObject({ wwwAuthenticate: basicChallenge });
    await expect(authenticate({ client_id: uid, client_secret: 'tbcs_wrong' })).rejects.toMatchObject({ wwwAuthenticate: undefined });
  });

  it('refuses a malformed Basic header, and a body client_id other than Basic’s, as invalid_client', async () => {
    for (const authorization of ['Basic', 'Basic !!!', `Basic ${Buffer.from('no colon').toString('base64')}`, `Basic ${Buffer.from('%E0%A4%A:x').toString('base64')}`]) {
      expect(await oauthRefusal(authenticate({ authorization })), authorization).toEqual(invalidClient);
    }
    expect(await oauthRefusal(authenticate({ authorization: basic(uid, secret), client_id: 'spa' }))).toEqual(invalidClient);
  });

  it('refuses two methods at once with invalid_request', async () => {
    expect(await oauthRefusal(authenticate({ authorization: basic(uid, secret), client_id: uid, client_secret: secret }))).toEqual({
      status: 400,
      code: 'invalid_request',
      description: 'The client must not use more than one authentication method.',
    });
  });

  it('takes a public client by its client_id alone only where public clients are allowed, and never with a secret', async () => {
    expect(await authenticate({ client_id: 'spa' }, { required: true, publicClients: true })).toEqual(spa);
    expect(await oauthRefusal(authenticate({ client_id: 'spa' }))).toEqual(invalidClient);
    expect(await oauthRefusal(authenticate({ client_id: 'spa', client_secret: 'anything' }, { required: true, publicClients: true }))).toEqual(invalidClient);
    // A confidential client is never taken by its id alone.
    expect(await oauthRefusal(authenticate({ client_id: uid }, { required: true, publicClients: true }))).toEqual(invalidClient);
  });
});
