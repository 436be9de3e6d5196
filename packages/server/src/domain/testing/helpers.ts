// The test kit's operations, one method per operation of the document's `test_helpers` area, answering what the
// document says each answers. Every one answers a promise, as the SDK's client of the same operations
// (`@tokenbell/sdk/test-helpers`) does, so a suite moves between the two without changing a line. The HTTP routes (http/test-helper-routes.ts) and the programmatic start
// (testing.ts) both call these, so a test in the same process and a suite in another language get the same thing.
import type { components, operations } from '@tokenbell/sdk';
import { InputError } from '../../explained-error.js';
import type { Storage } from '../storage/index.js';
import { presentUser } from '../users.js';
import { presentGroup, presentProject } from '../namespaces.js';
import { emitNotificationEvent, listNotificationMessages } from '../notification-mail.js';
import { isoOf } from '../time.js';
import { findProject } from '../visibility.js';
import {
  authorizeHeadlessly,
  createTestApplication,
  createTestGroup,
  createTestProject,
  createTestUser,
  decideDeviceAuthorizationHeadlessly,
  mintAccessToken,
  mintPersonalAccessToken,
  setTestMembership,
} from './shaping.js';
import type { TestKit } from './test-kit.js';

type Schemas = components['schemas'];
type Query<Operation extends keyof operations> = NonNullable<operations[Operation]['parameters']['query']>;

export interface TestHelperOptions {
  storage: Storage;
  kit: TestKit;
  baseUrl: string;
  codeTtl: number;
  tokenTtl: number;
  /** As the token endpoint makes id_tokens (the issuer is `baseUrl`). */
  openId: { idTokenTtl: number; instanceSecret: string };
  /** Called once an event's mail is queued, so delivery need not wait for its next poll. */
  onMailQueued?: () => void;
}

export type TestHelpers = ReturnType<typeof testHelpers>;

export function testHelpers({ storage, kit, baseUrl, codeTtl, tokenTtl, openId, onMailQueued }: TestHelperOptions) {
  const timing = () => ({ now: kit.clock.now(), codeTtl, tokenTtl, openId: { ...openId, issuer: baseUrl } });
  return {
    createUser: async (input: Schemas['TestUserRequest']): Promise<Schemas['User']> => presentUser(await createTestUser(storage, input, kit.passwordHashing), baseUrl),
    createGroup: async (input: Schemas['TestGroupRequest']): Promise<Schemas['Group']> => presentGroup(await createTestGroup(storage, input), baseUrl),
    createProject: async (input: Schemas['TestProjectRequest']): Promise<Schemas['Project']> => presentProject(storage, await createTestProject(storage, input), baseUrl),
    setMembership: (input: Schemas['TestMembership']): Promise<Schemas['TestMembership']> => setTestMembership(storage, input),
    createApplication: (input: Schemas['TestApplicationRequest']): Promise<Schemas['TestApplication']> => createTestApplication(storage, input),
    mintAccessToken: (input: Schemas['MintAccessTokenRequest']): Promise<Schemas['TokenResponse']> => mintAccessToken(storage, input, timing()),
    async mintPersonalAccessToken(input: Schemas['MintPersonalAccessTokenRequest']): Promise<Schemas['TestPersonalAccessToken']> {
      const { record, token } = await mintPersonalAccessToken(storage, input);
      return { id: record.id, name: record.name, token, scopes: [...record.scopes], expires_at: record.expires_at, created_at: isoOf(record.created_at) };
    },
    authorize: (input: Schemas['HeadlessAuthorizationRequest']): Promise<Schemas['HeadlessAuthorization']> => authorizeHeadlessly(storage, input, timing()),
    decideDeviceAuthorization: (input: Schemas['HeadlessDeviceDecisionRequest']): Promise<Schemas['HeadlessDeviceDecision']> =>
      decideDeviceAuthorizationHeadlessly(storage, input, kit.clock.now()),
    autoApproval: async (): Promise<Schemas['AutoApproval']> => ({ username: kit.autoApproval }),
    async setAutoApproval(username: string | null): Promise<Schemas['AutoApproval']> {
      const user = username === null ? null : await storage.users.byUsername(username);
      if (user === undefined) throw new InputError('username', `must name an existing user: there is no user ${JSON.stringify(username)}`, 'unknown');
      kit.autoApproval = user?.username ?? null;
      return { username: kit.autoApproval };
    },
    clock: async (): Promise<Schemas['TestClock']> => kit.clockState(),
    advanceClock: (seconds: number): Promise<Schemas['TestClock']> => kit.advanceClock(seconds),
    reset: (): Promise<void> => kit.reset(),
    requests: async (query: Query<'listRecordedRequests'> = {}): Promise<Schemas['RecordedRequest'][]> => kit.journal.list(query),
    clearRequests: async (): Promise<void> => kit.journal.clear(),
    faults: async (): Promise<Schemas['Fault'][]> => kit.faults.list(),
    async queueFault(fault: Schemas['FaultRequest']): Promise<Schemas['Fault']> {
      const { status, error, delay_ms } = fault.answer;
      if (status === undefined && error === undefined && delay_ms === undefined) throw new InputError('answer', 'must have a status, an error or a delay_ms: a message alone answers nothing');
      return kit.faults.add(fault);
    },
    clearFaults: async (): Promise<void> => kit.faults.clear(),
    /** An unknown project is an InputError on `project` (`unknown`), which the route answers 404 as the document says. */
    async emitNotificationEvent(project: string | number, event: Schemas['NotificationEventRequest']): Promise<Schemas['NotificationEventResult']> {
      // Administrators see every project, as in the service.
      const found = await findProject(storage.namespaces, String(project));
      if (!found) throw new InputError('project', `must name an existing project: there is no project ${JSON.stringify(String(project))}`, 'unknown');
      const result = await emitNotificationEvent(storage, found, event, { host: new URL(baseUrl).hostname, now: kit.clock.now() });
      onMailQueued?.();
      return result;
    },
    notificationMessages: (query: Query<'listNotificationMessages'> = {}): Promise<Schemas['NotificationMessage'][]> => listNotificationMessages(storage, query),
  };
}
