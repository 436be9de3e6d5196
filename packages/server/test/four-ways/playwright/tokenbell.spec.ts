import { expect, test } from '@tokenbell/server/playwright';

test.beforeEach(({ tokenbell }) => tokenbell.helpers.reset());

test("answers the token's user until the token expires", async ({ tokenbell, request }) => {
  const { access_token, expires_in } = await tokenbell.helpers.mintAccessToken({ username: 'alice', client_id: 'my-app' });
  const me = () => request.get(`${tokenbell.url}/api/v4/user`, { headers: { authorization: `Bearer ${access_token}` } });
  expect(await (await me()).json()).toMatchObject({ username: 'alice' });
  await tokenbell.helpers.advanceClock(expires_in + 1);
  expect((await me()).status()).toBe(401);
});
