// OpenID Connect's prompt and max_age (Core 3.1.2.1) as plain functions: what a request asks of the pages, what the
// endpoint does next for each standing of the user, and the request it comes back to after the sign-in it asked for.
import { describe, expect, it } from 'vitest';
import { afterSignIn, authorizationStep, readInteraction, type Interaction } from '../../../src/domain/oauth/prompt.js';

const plain: Interaction = { none: false, signIn: false, consent: false, maxAge: null };

describe('readInteraction', () => {
  it.each([
    [{}, plain],
    [{ prompt: 'login' }, { ...plain, signIn: true }],
    [{ prompt: 'select_account' }, { ...plain, signIn: true }],
    [{ prompt: 'consent login' }, { ...plain, signIn: true, consent: true }],
    [{ prompt: ' consent ' }, { ...plain, consent: true }],
    [{ prompt: 'none' }, { ...plain, none: true }],
    [{ max_age: '0' }, { ...plain, maxAge: 0 }],
    [{ max_age: '3600', prompt: 'none' }, { ...plain, none: true, maxAge: 3600 }],
  ])('reads %j', (params, interaction) => {
    expect(readInteraction(params)).toEqual(interaction);
  });

  it.each([
    [{ prompt: 'none login' }, 'prompt=none cannot be combined with other values.'],
    [{ prompt: 'create' }, 'prompt "create" is not one of none, login, consent, select_account.'],
    [{ max_age: '-1' }, 'max_age must be a whole number of seconds.'],
    [{ max_age: '1.5' }, 'max_age must be a whole number of seconds.'],
    [{ max_age: '' }, 'max_age must be a whole number of seconds.'],
  ])('refuses %j', (params, problem) => {
    expect(readInteraction(params)).toEqual({ problem });
  });
});

describe('authorizationStep', () => {
  const now = 1_800_000_000;
  const signedIn = { signedInAt: now - 600, now, consented: false };
  it.each([
    ['nobody signed in', plain, { ...signedIn, signedInAt: undefined }, 'sign-in'],
    ['signed in, no consent yet', plain, signedIn, 'consent'],
    ['signed in, consent given', plain, { ...signedIn, consented: true }, 'approve'],
    ['prompt=consent with consent given', { ...plain, consent: true }, { ...signedIn, consented: true }, 'consent'],
    ['prompt=login with a session', { ...plain, signIn: true }, { ...signedIn, consented: true }, 'sign-in'],
    ['max_age past', { ...plain, maxAge: 599 }, { ...signedIn, consented: true }, 'sign-in'],
    ['max_age met', { ...plain, maxAge: 600 }, { ...signedIn, consented: true }, 'approve'],
    ['prompt=none, consent given', { ...plain, none: true }, { ...signedIn, consented: true }, 'approve'],
  ])('%s: %s', (_what, interaction, standing, step) => {
    expect(authorizationStep(interaction, standing)).toEqual({ step });
  });

  it.each([
    ['nobody signed in', plain, { ...signedIn, signedInAt: undefined }, 'login_required'],
    ['max_age past', { ...plain, maxAge: 60 }, { ...signedIn, consented: true }, 'login_required'],
    ['no consent yet', plain, signedIn, 'consent_required'],
  ])('prompt=none, %s: %s', (_what, interaction, standing, error) => {
    expect(authorizationStep({ ...interaction, none: true }, standing)).toEqual({ step: 'refuse', error });
  });
});

describe('afterSignIn', () => {
  it('drops what a fresh sign-in has met and keeps the rest, prompt=consent included', () => {
    const base = { client_id: 'c', redirect_uri: 'https://app.example/cb', response_type: 'code', state: 's' };
    expect(afterSignIn({ ...base, prompt: 'login consent', max_age: '0' })).toEqual({ ...base, prompt: 'consent' });
    expect(afterSignIn({ ...base, prompt: 'select_account', max_age: '60' })).toEqual(base);
    expect(afterSignIn(base)).toEqual(base);
  });
});
