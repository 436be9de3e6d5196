// The test files' side of the one-server-per-run pattern: this file runs in a worker process, so it has tokenbell's
// URL and an administrator's token (provided by @tokenbell/server/vitest), not the instance, and shapes it over HTTP.
import { createTokenbellTestHelpers } from '@tokenbell/sdk/test-helpers';
import type {} from '@tokenbell/server/vitest'; // types inject('tokenbellUrl') and inject('tokenbellAdminToken')
import { beforeEach, expect, inject, it } from 'vitest';

const baseUrl = inject('tokenbellUrl');
const helpers = createTokenbellTestHelpers({ baseUrl, token: inject('tokenbellAdminToken') });

// Back to the seed before every test, whichever file ran before: the instance outlives each test and each file.
beforeEach(() => helpers.reset());

const user = (accessToken: string) => fetch(`${baseUrl}/api/v4/user`, { headers: { authorization: `Bearer ${accessToken}` } });

it("reads the seeded user with a token minted for them", async () => {
  const { access_token } = await helpers.mintAccessToken({ username: 'alice', client_id: 'my-app' });
  expect(await (await user(access_token)).json()).toMatchObject({ username: 'alice' });
});

// The next two run in order: the second sees what the first left behind, which must be nothing.
let bobsToken: string;

it('adds a user and signs them in', async () => {
  await helpers.createUser({ username: 'bob', email: 'bob@example.com', name: 'Bob', password: 'bob-password' });
  bobsToken = (await helpers.mintAccessToken({ username: 'bob', client_id: 'my-app' })).access_token;
  expect(await (await user(bobsToken)).json()).toMatchObject({ username: 'bob' });
});

it('finds that user and their token gone in the next test', async () => {
  expect((await user(bobsToken)).status).toBe(401);
  await expect(helpers.mintAccessToken({ username: 'bob', client_id: 'my-app' })).rejects.toThrow(/no user "bob"/);
});
