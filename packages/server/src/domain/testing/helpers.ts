// The test kit's operations, one method per operation of the document's `test_helpers` area, answering what the
// document says each answers. The HTTP routes (http/test-helper-routes.ts) and the programmatic start
// (testing.ts) both call these, so a test in the same process and a suite in another language get the same thing.
import type { components, operations } from '@tokenbell/sdk';
import { InputError } from '../../explained-error.js';
import type { Storage } from '../../store/storage.js';
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
  /** Called once an event's mail is queued, so delivery need not wait for its next poll. */
  onMailQueued?: () => void;
}

export type TestHelpers = ReturnType<typeof testHelpers>;

export function testHelpers({ storage, kit, baseUrl, codeTtl, tokenTtl, onMailQueued }: TestHelperOptions) {
  const timing = () => ({ now: kit.clock.now(), codeTtl, tokenTtl });
  return {
    createUser: async (input: Schemas['TestUserRequest']): Promise<Schemas['User']> => presentUser(await createTestUser(storage, input), baseUrl),
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
    autoApproval: (): Schemas['AutoApproval'] => ({ username: kit.autoApproval }),
    async setAutoApproval(username: string | null): Promise<Schemas['AutoApproval']> {
      const user = username === null ? null : await storage.users.byUsername(username);
      if (user === undefined) throw new InputError('username', `must name an existing user: there is no user ${JSON.stringify(username)}`, 'unknown');
      kit.autoApproval = user?.username ?? null;
      return { username: kit.autoApproval };
    },
    clock: (): Schemas['TestClock'] => kit.clockState(),
    advanceClock: (seconds: number): Promise<Schemas['TestClock']> => kit.advanceClock(seconds),
    reset: (): Promise<void> => kit.reset(),
    requests: (query: Query<'listRecordedRequests'> = {}): Schemas['RecordedRequest'][] => kit.journal.list(query),
    clearRequests: (): void => kit.journal.clear(),
    faults: (): Schemas['Fault'][] => kit.faults.list(),
    queueFault(fault: Schemas['FaultRequest']): Schemas['Fault'] {
      const { status, error, delay_ms } = fault.answer;
      if (status === undefined && error === undefined && delay_ms === undefined) throw new InputError('answer', 'must have a status, an error or a delay_ms: a message alone answers nothing');
      return kit.faults.add(fault);
    },
    clearFaults: (): void => kit.faults.clear(),
    /** Undefined for an unknown project (the route's 404). */
    async emitNotificationEvent(project: string | number, event: Schemas['NotificationEventRequest']): Promise<Schemas['NotificationEventResult'] | undefined> {
      // Administrators see every project, as in the service.
      const found = await findProject(storage.namespaces, String(project));
      if (!found) return undefined;
      const result = await emitNotificationEvent(storage, found, event, { host: new URL(baseUrl).hostname, now: kit.clock.now() });
      onMailQueued?.();
      return result;
    },
    notificationMessages: (query: Query<'listNotificationMessages'> = {}): Promise<Schemas['NotificationMessage'][]> => listNotificationMessages(storage, query),
  };
}
