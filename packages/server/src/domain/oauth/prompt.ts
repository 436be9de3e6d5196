// What OpenID Connect lets a client ask of the authorization endpoint's pages (Core 3.1.2.1): `prompt` (none, login,
// consent, select_account) and `max_age`. GitLab's Doorkeeper honours them; a client that sends `prompt=none` to
// check a session silently, or `prompt=login` before a sensitive step, must not be shown a page or an old sign-in.
import type { AuthorizationRequest } from './authorization.js';

const promptValues = ['none', 'login', 'consent', 'select_account'] as const;
type PromptValue = (typeof promptValues)[number];

/** What the client asked of the pages. */
export interface Interaction {
  /** No page at all: answer at once, or say login_required / consent_required. */
  none: boolean;
  /** A fresh sign-in, whatever the session (`login`, and `select_account`: signing in is how an account is chosen). */
  signIn: boolean;
  /** The consent page even for an application the user approved before. */
  consent: boolean;
  /** The most seconds since the user last signed in, or null. */
  maxAge: number | null;
}

/** The interaction the request's `prompt` and `max_age` ask for, or why they cannot be honoured. */
export function readInteraction(params: Pick<AuthorizationRequest, 'prompt' | 'max_age'>): Interaction | { problem: string } {
  const values = (params.prompt ?? '').split(' ').filter((v) => v !== '');
  const unknown = values.find((v) => !(promptValues as readonly string[]).includes(v));
  if (unknown !== undefined) return { problem: `prompt ${JSON.stringify(unknown)} is not one of ${promptValues.join(', ')}.` };
  const asked = new Set(values as PromptValue[]);
  if (asked.has('none') && asked.size > 1) return { problem: 'prompt=none cannot be combined with other values.' };
  let maxAge: number | null = null;
  if (params.max_age !== undefined) {
    if (!/^\d{1,10}$/.test(params.max_age)) return { problem: 'max_age must be a whole number of seconds.' };
    maxAge = Number(params.max_age);
  }
  return { none: asked.has('none'), signIn: asked.has('login') || asked.has('select_account'), consent: asked.has('consent'), maxAge };
}

export type AuthorizationStep =
  | { step: 'sign-in' }
  | { step: 'consent' }
  | { step: 'approve' }
  /** Section 3.1.2.6: prompt=none, and a page would have been needed. */
  | { step: 'refuse'; error: 'login_required' | 'consent_required' };

export interface Standing {
  /** When the session's user signed in, or undefined when nobody is signed in. */
  signedInAt: number | undefined;
  now: number;
  /** Whether the user's consent is given already (authorization.ts alreadyAuthorized). */
  consented: boolean;
}

/** What the authorization endpoint does next for a valid request. */
export function authorizationStep(interaction: Interaction, { signedInAt, now, consented }: Standing): AuthorizationStep {
  const stale = signedInAt === undefined || interaction.signIn || (interaction.maxAge !== null && now - signedInAt > interaction.maxAge);
  if (stale) return interaction.none ? { step: 'refuse', error: 'login_required' } : { step: 'sign-in' };
  if (consented && !interaction.consent) return { step: 'approve' };
  return interaction.none ? { step: 'refuse', error: 'consent_required' } : { step: 'consent' };
}

/**
 * The request to come back to after the sign-in it asked for: without what asked for it, which a fresh sign-in has
 * met (and which would otherwise send the user to sign in again, for ever). The id_token's `auth_time` says when it was.
 */
export function afterSignIn(params: AuthorizationRequest): AuthorizationRequest {
  const { max_age: _met, prompt, ...rest } = params;
  const kept = (prompt ?? '').split(' ').filter((v) => v === 'consent');
  return kept.length > 0 ? { ...rest, prompt: kept.join(' ') } : rest;
}

export const interactionErrors: Record<'login_required' | 'consent_required', string> = {
  login_required: 'The authorization server requires end-user authentication.',
  consent_required: 'The authorization server requires end-user consent.',
};
