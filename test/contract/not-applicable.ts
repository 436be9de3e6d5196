// Every declared answer that the contract suite does not produce on some target, and why: the one place for it.
// scripts/contract-coverage.ts fails when a declared (operation, status) is neither exercised on a target nor listed
// here, and when something listed here was exercised after all (the reason has gone stale).
import type { CaseContext, TargetKind } from './context.js';

type Store = CaseContext['store'];

/** No case can produce this answer on this target. */
export interface AnswerNotApplicable {
  target: TargetKind;
  status: number;
  /** The operations it holds for; every operation declaring `status` when absent. */
  operations?: readonly string[];
  reason: string;
  /**
   * The store whose run it holds for; both when absent. Only `file`: the coverage check reads the file store's run
   * alone, so what the `postgres` run cannot do is said case by case (casesNotApplicableOnStore).
   */
  store?: Extract<Store, 'file'>;
}

const PROXY_FOLLOWS_REDIRECTS =
  'Prism proxy follows upstream redirects (node-fetch default, no option; stoplightio/prism#1977), so a 302 never reaches the client; the server target checks it, and the server validates it with --validate-responses';

/**
 * Forms whose every field has a maxLength and which allow no other field, with limits low enough that no valid body
 * reaches 100 kB even with every field full of 4-byte characters, 12 bytes each percent-encoded: at most about
 * 67.6 kB for sign-in, 59 kB for consent, 6.3 kB for a personal access token, 3 kB for the `_csrf`-only forms. The
 * application form's limits allow about 104.5 kB, so its 413 is a case on every target.
 */
const boundedForms = [
  'decideAuthorization',
  'confirmDeviceAuthorization',
  'decideDeviceAuthorization',
  'signIn',
  'signOut',
  'deleteApplication',
  'revokeAuthorizedApplication',
  'revokePasswordGrantAuthorization',
  'createPersonalAccessToken',
  'revokePersonalAccessToken',
];

/**
 * The test helpers whose JSON body is bounded: every field has a maxLength or an enum, the arrays a maxItems, and no
 * other field is allowed, so even every character escaped as `\uXXXX` (12 bytes for a 4-byte character, 6 for
 * one of the e-mail addresses) keeps a valid body under 100 kB: about 66 kB for a user, 48 kB for a headless
 * authorization, 41 kB for a fault, at most 13 kB for the others. JSON allows whitespace between tokens, though, so their
 * 413 is played twice: whitespace after a valid body (on the server and the mock), and one field more (on the server
 * and the proxy). The other test helpers that take a body (groups, projects and applications, through `members` and
 * `redirect_uris`) can be valid past 100 kB; their 413 is one case on every target.
 */
export const boundedJsonBodies = [
  'createTestUser',
  'setTestMembership',
  'mintAccessToken',
  'mintPersonalAccessToken',
  'authorizeHeadlessly',
  'decideDeviceAuthorizationHeadlessly',
  'setAutoApproval',
  'advanceTestClock',
  'queueFault',
] as const;
/** The names of the two 413 cases of each of boundedJsonBodies. */
export const paddedBodyCase = {
  whitespace: (operation: string) => `${operation} with a valid body padded with whitespace past the 100 kB limit is refused before it is read`,
  field: (operation: string) => `${operation} with one field more, past the 100 kB limit, is refused before it is read`,
};

const RESET_ON_FILE =
  'the file store resets (204): only a database shared by instances refuses a reset (400), and the `postgres` project plays this case on its server target; the operation takes no body and no parameter, so on the JSON file store it has nothing to refuse';

/** The operations whose 503 says the store cannot be reached (every one that reads or writes it; readiness has its own). */
const storeBackedOperations = [
  'authorize',
  'decideAuthorization',
  'createToken',
  'authorizeDevice',
  'revokeToken',
  'introspectToken',
  'getTokenInfo',
  'getJsonWebKeySet',
  'getUserInfo',
  'postUserInfo',
  'showSignIn',
  'signIn',
  'signOut',
  'showDeviceVerification',
  'decideDeviceAuthorization',
  'confirmDeviceAuthorization',
  'listApplications',
  'createApplication',
  'deleteApplication',
  'revokeAuthorizedApplication',
  'revokePasswordGrantAuthorization',
  'listNotificationMail',
  'listPersonalAccessTokens',
  'createPersonalAccessToken',
  'revokePersonalAccessToken',
  'showHome',
  'showDemoCallback',
  'getCurrentUser',
  'getVersion',
  'getMetadata',
  'getCurrentPersonalAccessToken',
  'revokeCurrentPersonalAccessToken',
  'getUser',
  'getGlobalNotificationSettings',
  'updateGlobalNotificationSettings',
  'getGroup',
  'getProject',
  'listGroups',
  'listProjects',
  'getGroupMember',
  'getProjectMember',
  'getGroupNotificationSettings',
  'updateGroupNotificationSettings',
  'getProjectNotificationSettings',
  'updateProjectNotificationSettings',
  'emitNotificationEvent',
  'listNotificationMessages',
  'createTestUser',
  'createTestGroup',
  'createTestProject',
  'setTestMembership',
  'createTestApplication',
  'mintAccessToken',
  'mintPersonalAccessToken',
  'authorizeHeadlessly',
  'decideDeviceAuthorizationHeadlessly',
  'getAutoApproval',
  'setAutoApproval',
  'getTestClock',
  'advanceTestClock',
  'resetTestState',
  'listRecordedRequests',
  'clearRecordedRequests',
  'listFaults',
  'queueFault',
  'clearFaults',
];

const STORE_OUTAGE =
  'only a database that cannot be reached answers it (refused, stalled past --database-timeout, shut down), and the suite freezes or stops no database under its targets; test/hardening/database-outage.test.ts plays it on the real server, in every area, and test/http/errors.test.ts checks each area\'s answer';

const DEVICE_FLOOD =
  "it takes 60 device authorizations a minute from one address, or 100 of one application's waiting at once, and the suite's other device cases share its one address and count; test/http/device-grant.test.ts plays both refusals over HTTP with the server checking its answers against the document";

export const deviceFloodCase = 'a flood of device authorizations is refused with 429 and Retry-After';

export const answersNotApplicable: readonly AnswerNotApplicable[] = [
  { target: 'proxy', status: 302, reason: PROXY_FOLLOWS_REDIRECTS },
  {
    target: 'mock',
    status: 413,
    operations: boundedForms,
    reason:
      'every field of the form has a maxLength and no other field is allowed, so even every field full of 4-byte characters (12 bytes each, percent-encoded) stays under 100 kB and only an invalid body can pass it, and Prism answers an invalid request with its own 400/422 whatever Prefer asks for; the server and the proxy (without request validation) check the 413',
  },
  { target: 'server', status: 400, operations: ['resetTestState'], store: 'file', reason: RESET_ON_FILE },
  { target: 'proxy', status: 400, operations: ['resetTestState'], store: 'file', reason: RESET_ON_FILE },
  ...(['server', 'mock', 'proxy'] as const).map((target) => ({ target, status: 503, operations: storeBackedOperations, reason: STORE_OUTAGE })),
  ...(['server', 'proxy'] as const).map((target) => ({ target, status: 429, operations: ['authorizeDevice'], reason: DEVICE_FLOOD })),
];

/** One case that cannot run on a target although other cases cover its answer there. */
export const casesNotApplicable: Readonly<Record<string, Partial<Record<TargetKind, string>>>> = {
  [deviceFloodCase]: { server: DEVICE_FLOOD, proxy: DEVICE_FLOOD },
  'the current user without credentials': {
    proxy:
      "Prism proxy answers a request without any credentials with its own 401 and never forwards it, even with --validate-request=false; the server's 401 reaches the proxy target through the unknown-token cases",
  },
  ...Object.fromEntries(
    boundedJsonBodies.flatMap((operation) => [
      [
        paddedBodyCase.whitespace(operation),
        {
          proxy: `Prism proxy parses a JSON body and forwards it serialised again, without the whitespace, so the server would get a small valid body and act on it; "${paddedBodyCase.field(operation)}" checks the 413 on the proxy target`,
        },
      ],
      [
        paddedBodyCase.field(operation),
        {
          mock: `the field breaks the document, and Prism answers an invalid request with its own 400/422 whatever Prefer asks for; "${paddedBodyCase.whitespace(operation)}" checks the 413 on the mock`,
        },
      ],
    ]),
  ),
};

/** One case that cannot run on one store's servers, whatever the target. */
export const casesNotApplicableOnStore: Readonly<Record<string, Partial<Record<Store, string>>>> = {
  'a reset brings the instance back to its seeded state: a user added since is gone, the clock and automatic approval are back': {
    postgres:
      'a database is shared by every instance on it, so the server refuses to reset one (400), which "a reset on a database shared by instances is refused" checks',
  },
};

/** Why a case with this name, operation and status does not run on `target` on `store`, or undefined when it does. */
export function notApplicableReason(target: TargetKind, store: Store, c: { name: string; operation: string; status: number }): string | undefined {
  const answer = answersNotApplicable.find(
    (a) =>
      a.target === target &&
      a.status === c.status &&
      (a.operations === undefined || a.operations.includes(c.operation)) &&
      (a.store === undefined || a.store === store),
  );
  return answer?.reason ?? casesNotApplicable[c.name]?.[target] ?? casesNotApplicableOnStore[c.name]?.[store];
}
