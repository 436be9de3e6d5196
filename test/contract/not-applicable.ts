// Every declared answer that the contract suite does not produce on some target, and why: the one place for it.
// scripts/contract-coverage.ts fails when a declared (operation, status) is neither exercised on a target nor listed
// here, and when something listed here was exercised after all (the reason has gone stale).
import type { TargetKind } from './context.js';

/** No case can produce this answer on this target. */
export interface AnswerNotApplicable {
  target: TargetKind;
  status: number;
  /** The operations it holds for; every operation declaring `status` when absent. */
  operations?: readonly string[];
  reason: string;
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
  'signIn',
  'signOut',
  'deleteApplication',
  'revokeAuthorizedApplication',
  'revokePasswordGrantAuthorization',
  'createPersonalAccessToken',
  'revokePersonalAccessToken',
];

export const answersNotApplicable: readonly AnswerNotApplicable[] = [
  { target: 'proxy', status: 302, reason: PROXY_FOLLOWS_REDIRECTS },
  {
    target: 'mock',
    status: 413,
    operations: boundedForms,
    reason:
      'every field of the form has a maxLength and no other field is allowed, so even every field full of 4-byte characters (12 bytes each, percent-encoded) stays under 100 kB and only an invalid body can pass it, and Prism answers an invalid request with its own 400/422 whatever Prefer asks for; the server and the proxy (without request validation) check the 413',
  },
];

/** One case that cannot run on a target although other cases cover its answer there. */
export const casesNotApplicable: Readonly<Record<string, Partial<Record<TargetKind, string>>>> = {
  'the current user without credentials': {
    proxy:
      "Prism proxy answers a request without any credentials with its own 401 and never forwards it, even with --validate-request=false; the server's 401 reaches the proxy target through the unknown-token cases",
  },
};

/** Why a case with this name, operation and status does not run on `target`, or undefined when it does. */
export function notApplicableReason(target: TargetKind, c: { name: string; operation: string; status: number }): string | undefined {
  const answer = answersNotApplicable.find(
    (a) => a.target === target && a.status === c.status && (a.operations === undefined || a.operations.includes(c.operation)),
  );
  return answer?.reason ?? casesNotApplicable[c.name]?.[target];
}
