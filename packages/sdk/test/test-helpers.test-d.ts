import { describe, expectTypeOf, it } from 'vitest';
import type { operations, testHelperOperations } from '../src/index.js';
import { createTokenbellTestHelpers, type TokenbellTestHelpers } from '../src/test-helpers.js';

const helpers = createTokenbellTestHelpers({ baseUrl: 'http://127.0.0.1:3000', token: 'glpat-admin' });
type Answer<K extends keyof TokenbellTestHelpers> = Awaited<ReturnType<TokenbellTestHelpers[K]>>;
// The operation's own answer, read from `operations` rather than from the raw client, whose data type leaves out
// properties typed `null` alone (Group's avatar_url and parent_id).
type Documented<O extends keyof operations, S extends keyof operations[O]['responses']> = operations[O]['responses'][S] extends {
  content: { 'application/json': infer T };
}
  ? T
  : never;

// The interface names schemas by hand, so each method is held to what the document answers for its operation.
describe('test helpers', () => {
  it('are named as the document names them (x-helper), every one of them', () => {
    expectTypeOf<keyof TokenbellTestHelpers>().toEqualTypeOf<keyof testHelperOperations>();
  });

  it('answer what the document answers for their operation', () => {
    expectTypeOf<Answer<'createUser'>>().toEqualTypeOf<Documented<'createTestUser', 201>>();
    expectTypeOf<Answer<'createGroup'>>().toEqualTypeOf<Documented<'createTestGroup', 201>>();
    expectTypeOf<Answer<'createProject'>>().toEqualTypeOf<Documented<'createTestProject', 201>>();
    expectTypeOf<Answer<'setMembership'>>().toEqualTypeOf<Documented<'setTestMembership', 200>>();
    expectTypeOf<Answer<'createApplication'>>().toEqualTypeOf<Documented<'createTestApplication', 201>>();
    expectTypeOf<Answer<'mintAccessToken'>>().toEqualTypeOf<Documented<'mintAccessToken', 201>>();
    expectTypeOf<Answer<'mintPersonalAccessToken'>>().toEqualTypeOf<Documented<'mintPersonalAccessToken', 201>>();
    expectTypeOf<Answer<'authorize'>>().toEqualTypeOf<Documented<'authorizeHeadlessly', 201>>();
    expectTypeOf<Answer<'decideDeviceAuthorization'>>().toEqualTypeOf<Documented<'decideDeviceAuthorizationHeadlessly', 201>>();
    expectTypeOf<Answer<'autoApproval'>>().toEqualTypeOf<Documented<'getAutoApproval', 200>>();
    expectTypeOf<Answer<'setAutoApproval'>>().toEqualTypeOf<Documented<'setAutoApproval', 200>>();
    expectTypeOf<Answer<'clock'>>().toEqualTypeOf<Documented<'getTestClock', 200>>();
    expectTypeOf<Answer<'advanceClock'>>().toEqualTypeOf<Documented<'advanceTestClock', 200>>();
    expectTypeOf<Answer<'reset'>>().toEqualTypeOf<void>();
    expectTypeOf<Answer<'requests'>>().toEqualTypeOf<Documented<'listRecordedRequests', 200>>();
    expectTypeOf<Answer<'clearRequests'>>().toEqualTypeOf<void>();
    expectTypeOf<Answer<'faults'>>().toEqualTypeOf<Documented<'listFaults', 200>>();
    expectTypeOf<Answer<'queueFault'>>().toEqualTypeOf<Documented<'queueFault', 201>>();
    expectTypeOf<Answer<'clearFaults'>>().toEqualTypeOf<void>();
    expectTypeOf<Answer<'emitNotificationEvent'>>().toEqualTypeOf<Documented<'emitNotificationEvent', 201>>();
    expectTypeOf<Answer<'notificationMessages'>>().toEqualTypeOf<Documented<'listNotificationMessages', 200>>();
  });

  it('take the bodies the document takes', () => {
    expectTypeOf(helpers.createUser).parameter(0).toEqualTypeOf<operations['createTestUser']['requestBody']['content']['application/json']>();
    expectTypeOf(helpers.queueFault).parameter(0).toEqualTypeOf<operations['queueFault']['requestBody']['content']['application/json']>();
    expectTypeOf(helpers.authorize).parameter(0).toEqualTypeOf<operations['authorizeHeadlessly']['requestBody']['content']['application/json']>();
    expectTypeOf(helpers.decideDeviceAuthorization).parameter(0).toEqualTypeOf<operations['decideDeviceAuthorizationHeadlessly']['requestBody']['content']['application/json']>();
  });

  it('refuse what the document refuses', () => {
    // @ts-expect-error a user needs a password
    void helpers.createUser({ username: 'u', email: 'u@example.com', name: 'U' });
    // @ts-expect-error 35 is not an access level
    void helpers.setMembership({ username: 'u', group: 'acme', access_level: 35 });
    // @ts-expect-error requests are filtered by method, path, client_id, username
    void helpers.requests({ status: 500 });
    // @ts-expect-error seconds, not a duration string
    void helpers.advanceClock('1h');
    // @ts-expect-error approve or deny, nothing else
    void helpers.decideDeviceAuthorization({ user_code: 'WDJB-MJHT', username: 'u', decision: 'maybe' });
    void helpers.setAutoApproval(null);
  });

  it('take a token or the main client\'s credentials', () => {
    createTokenbellTestHelpers({ baseUrl: '', auth: { accessToken: 't' } });
    // @ts-expect-error one or the other is needed
    createTokenbellTestHelpers({ baseUrl: '' });
  });
});

describe('the headless authorization', () => {
  it('is a union on error: a code when there is no error, an error when there is no code', async () => {
    const answer = await helpers.authorize({ username: 'alice', client_id: 'app', redirect_uri: 'http://127.0.0.1:8080/cb' });
    if (answer.error === null) expectTypeOf(answer.code).toEqualTypeOf<string>();
    else expectTypeOf(answer.code).toEqualTypeOf<null>();
  });
});
