import { beforeEach, expect, it } from '@jest/globals';
import { createTokenbellTestHelpers } from '@tokenbell/sdk/test-helpers';

const baseUrl = process.env.TOKENBELL_URL!;
const helpers = createTokenbellTestHelpers({ baseUrl, token: process.env.TOKENBELL_TEST_HELPERS_TOKEN! });
beforeEach(() => helpers.reset());

it("answers the token's user until the token expires", async () => {
  const { access_token, expires_in } = await helpers.mintAccessToken({ username: 'alice', client_id: 'my-app' });
  const me = () => fetch(`${baseUrl}/api/v4/user`, { headers: { authorization: `Bearer ${access_token}` } });
  expect(await (await me()).json()).toMatchObject({ username: 'alice' });
  await helpers.advanceClock(expires_in + 1);
  expect((await me()).status).toBe(401);
});
