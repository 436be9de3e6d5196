// Where a form posted without a session resumes after sign-in, for the two pages that post for a user without one
// (the consent and the device code forms). Apart from their routers because the session layer (stack.ts) needs
// them too.
import { type AuthorizationRequest, authorizationParamNames } from '../../domain/oauth/authorization.js';
import { devicePath } from './paths.js';
import { queryString } from './shared.js';

/** The authorization request's parameters from the query or the consent form (strings only; the validator ran). */
export function authorizationParams(source: Record<string, unknown>): AuthorizationRequest {
  const params: Record<string, string> = {};
  for (const name of authorizationParamNames) {
    const value = source[name];
    if (typeof value === 'string') params[name] = value;
  }
  return { client_id: '', redirect_uri: '', response_type: '', ...params };
}

/** Where a consent form posted without a session resumes after sign-in: the same authorization request. */
export function authorizationResumePath(body: Record<string, unknown>): string {
  const params = authorizationParams(body);
  const sent = Object.entries(params).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && entry[1] !== '');
  return `/oauth/authorize?${queryString(Object.fromEntries(sent))}`;
}

/** Where a device form posted without a session resumes after sign-in: the code form, with the code it carried. */
export function deviceResumePath(body: Record<string, unknown>): string {
  const typed = typeof body.user_code === 'string' ? body.user_code : '';
  return typed === '' ? devicePath : `${devicePath}?${queryString({ user_code: typed })}`;
}
