// Every refusal of the test-helper area is the same in-process (startTokenbell's helpers) and over HTTP (the SDK's
// client of the area, on the same instance): the same error class, status and message. The in-process helpers check
// their input against the document's schemas as the validator checks a request; this table holds them to it, for
// every operation that takes input, with the values the issue found slipping through (a clock moved back or by a
// fraction, a fault with status 99).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTokenbellTestHelpers, type TokenbellTestHelpers } from '../../packages/sdk/src/test-helpers.js';
import { startTokenbell, type RunningTokenbell } from '../../packages/server/src/testing.js';
import { testHelperOperations } from '../../packages/server/src/openapi/test-helper-operations.js';

let tokenbell: RunningTokenbell;
let overHttp: TokenbellTestHelpers;
beforeAll(async () => {
  tokenbell = await startTokenbell({
    seed: {
      users: [{ username: 'alice', email: 'alice@example.com', name: 'Alice', password: 'alice-password' }],
      groups: [{ path: 'acme', name: 'Acme', visibility: 'private', members: [{ username: 'alice', access_level: 50 }] }],
      projects: [{ namespace: 'acme', path: 'widgets', name: 'Widgets', visibility: 'private' }],
      applications: [{ name: 'App', owner: 'alice', client_id: 'app', client_secret: 'app-secret-0123456789abcdef', redirect_uris: ['http://127.0.0.1:8080/cb'] }],
    },
  });
  overHttp = createTokenbellTestHelpers({ baseUrl: tokenbell.url, token: tokenbell.adminToken });
});
beforeEach(() => tokenbell.helpers.reset());
afterAll(() => tokenbell.close());

// Loosely typed on purpose: these calls send what the types forbid, as a JavaScript test or a JSON body would.
type Call = (helpers: Record<string, (...args: unknown[]) => Promise<unknown>>) => Promise<unknown>;
const refusals: Array<[helper: string, what: string, call: Call]> = [
  ['createUser', 'without an e-mail address', (h) => h.createUser!({ username: 'bob', name: 'Bob', password: 'correct horse battery' })],
  ['createUser', 'with an e-mail address that is not one', (h) => h.createUser!({ username: 'bob', email: 'nope', name: 'Bob', password: 'correct horse battery' })],
  ['createUser', 'with a name already taken', (h) => h.createUser!({ username: 'alice', email: 'other@example.com', name: 'Al', password: 'correct horse battery' })],
  ['createGroup', 'with an unknown visibility', (h) => h.createGroup!({ path: 'g2', name: 'G2', visibility: 'secret' })],
  ['createProject', 'in a namespace that does not exist', (h) => h.createProject!({ namespace: 'nowhere', path: 'p', name: 'P' })],
  ['setMembership', 'with an access level the service lacks', (h) => h.setMembership!({ username: 'alice', group: 'acme', access_level: 7 })],
  ['createApplication', 'without redirect URIs', (h) => h.createApplication!({ name: 'X', owner: 'alice' })],
  ['mintAccessToken', 'without a client', (h) => h.mintAccessToken!({ username: 'alice' })],
  ['mintAccessToken', 'for a user who does not exist', (h) => h.mintAccessToken!({ username: 'nobody', client_id: 'app' })],
  ['mintPersonalAccessToken', 'with an unknown scope', (h) => h.mintPersonalAccessToken!({ username: 'alice', name: 't', scopes: ['write_api' as never] })],
  ['authorize', 'without a redirect URI the application has', (h) => h.authorize!({ username: 'alice', client_id: 'app', redirect_uri: 'http://evil.example/cb' })],
  ['decideDeviceAuthorization', 'for a decision that is neither', (h) => h.decideDeviceAuthorization!({ user_code: 'ABCD-EFGH', username: 'alice', decision: 'maybe' })],
  ['setAutoApproval', 'for a user who does not exist', (h) => h.setAutoApproval!('nobody')],
  ['advanceClock', 'backwards', (h) => h.advanceClock!(-5)],
  ['advanceClock', 'by a fraction of a second', (h) => h.advanceClock!(1.5)],
  ['advanceClock', 'by nothing', (h) => h.advanceClock!(0)],
  ['requests', 'a page of no entries', (h) => h.requests!({ per_page: 0 })],
  ['queueFault', 'with a status that is not HTTP', (h) => h.queueFault!({ match: { path: '/api/v4/user' }, answer: { status: 99 } })],
  ['queueFault', 'with a message and nothing to answer', (h) => h.queueFault!({ match: { path: '/api/v4/user' }, answer: { message: 'only words' } })],
  ['queueFault', 'with a property the document lacks', (h) => h.queueFault!({ match: { path: '/api/v4/user' }, answer: { status: 500 }, when: 'now' })],
  ['emitNotificationEvent', 'on a project that does not exist', (h) => h.emitNotificationEvent!('nobody/nothing', { kind: 'new_note', title: 't', author: 'alice' })],
  ['emitNotificationEvent', 'of a kind the service lacks', (h) => h.emitNotificationEvent!('acme/widgets', { kind: 'new_epic', title: 't', author: 'alice' })],
  ['notificationMessages', 'a page of no entries', (h) => h.notificationMessages!({ per_page: 0 })],
];

const outcome = (promise: Promise<unknown>) =>
  promise.then(
    (value) => ({ answered: value }),
    (error: Error & { status?: number }) => ({ class: error.constructor.name, status: error.status, message: error.message }),
  );

describe('a test-helper refusal', () => {
  it.each(refusals)('%s %s is refused alike in-process and over HTTP', async (_helper, _what, call) => {
    const http = await outcome(call(overHttp as never));
    await tokenbell.helpers.reset();
    const inProcess = await outcome(call(tokenbell.helpers as never));
    expect(http).toMatchObject({ status: expect.any(Number), message: expect.stringMatching(/^4\d\d /) });
    expect(inProcess).toEqual(http);
  });

  it('has a row for every operation that takes input', () => {
    const withInput = testHelperOperations.filter((op) => op.body !== null || op.queryParams.length > 0).map((op) => op.helper);
    expect(new Set(refusals.map(([helper]) => helper))).toEqual(new Set(withInput));
  });
});
