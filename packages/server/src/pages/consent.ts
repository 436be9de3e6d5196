// The consent page of the authorization endpoint: who asks, for what, and the two answers.
import { authorizationParamNames as carried, type AuthorizationRequest, type ValidAuthorizationRequest } from '../domain/oauth/authorization.js';
import type { UserRecord } from '../domain/storage/records.js';
import { html } from './html.js';
import { applicationRequest, csrfField, signedInPage } from './frame.js';

// Of the request's parameters, only those the client sent are repeated.
export function consentPage(user: UserRecord, csrf: string, request: ValidAuthorizationRequest, owner: UserRecord | undefined): string {
  const { application } = request;
  const params: AuthorizationRequest = request.params;
  const redirectHost = safeHost(request.redirect_uri);
  return signedInPage(
    `Authorize ${application.name}`,
    user,
    csrf,
    html`<h1>Authorize ${application.name} to use your account?</h1>
<p>An application called <strong>${application.name}</strong> is requesting access to your tokenbell account
<strong>${user.username}</strong>${redirectHost ? html`; you will be sent back to <strong>${redirectHost}</strong>` : ''}.</p>
${applicationRequest(owner, request.scopes)}
<form method="post" action="/oauth/authorize">
${csrfField(csrf)}
${carried.map((name) => (params[name] === undefined ? '' : html`<input type="hidden" name="${name}" value="${params[name]}">\n`))}
<div class="actions">
<button type="submit" name="decision" value="approve">Authorize</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</div>
</form>`,
  );
}

function safeHost(uri: string): string | undefined {
  try {
    const url = new URL(uri);
    return url.host || url.protocol;
  } catch {
    return undefined;
  }
}
