// tokenbell.test.js: plain JavaScript, which Jest runs as it is, with no transform.
const { beforeEach, expect, it } = require('@jest/globals');
const { createTokenbellClient } = require('@tokenbell/sdk');
const { createTokenbellTestHelpers } = require('@tokenbell/sdk/test-helpers');

const baseUrl = process.env.TOKENBELL_URL;
const helpers = createTokenbellTestHelpers({ baseUrl, token: process.env.TOKENBELL_TEST_HELPERS_TOKEN });
beforeEach(() => helpers.reset());

it('signs alice in with a minted token, until it expires', async () => {
  const { access_token, expires_in } = await helpers.mintAccessToken({ username: 'alice', client_id: 'my-app' });
  const client = createTokenbellClient({ baseUrl, auth: { accessToken: access_token } });
  expect(await client.user.current()).toMatchObject({ username: 'alice' });
  await helpers.advanceClock(expires_in + 1);
  await expect(client.user.current()).rejects.toMatchObject({ status: 401 });
});
