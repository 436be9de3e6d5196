import { startTokenbell, type RunningTokenbell } from '@tokenbell/server/testing';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';

let tokenbell: RunningTokenbell;

beforeAll(async () => {
  tokenbell = await startTokenbell({
    seed: {
      users: [{ username: 'alice', email: 'alice@example.com', name: 'Alice', password: 'alice-password' }],
      applications: [
        { name: 'My App', owner: 'alice', client_id: 'my-app', client_secret: 'my-app-secret-0123456789', redirect_uris: ['http://127.0.0.1:3000/callback'] },
      ],
    },
  });
});
beforeEach(() => tokenbell.helpers.reset()); // back to the seed: what one test changed is gone in the next
afterAll(() => tokenbell.close());

it("answers the token's user until the token expires", async () => {
  // A token as the app would get by signing alice in, without the browser round trip.
  const { access_token, expires_in } = await tokenbell.helpers.mintAccessToken({ username: 'alice', client_id: 'my-app' });
  const me = () => fetch(`${tokenbell.url}/api/v4/user`, { headers: { authorization: `Bearer ${access_token}` } });

  expect(await (await me()).json()).toMatchObject({ username: 'alice' });

  // tokenbell's own clock: the test need not wait, and the machine's clock is left alone.
  await tokenbell.helpers.advanceClock(expires_in + 1);
  expect((await me()).status).toBe(401);
});
