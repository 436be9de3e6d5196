// The personal access tokens page: the user's tokens (never their values), the creation form, revoke buttons.
import type { PersonalAccessTokenRecord, UserRecord } from '../domain/storage/records.js';
import { html } from './html.js';
import { isoOf } from '../domain/time.js';
import { apiScopes } from '../openapi/document.js';
import { csrfField, formError, listTable, scopeCheckboxes, signedInPage } from './frame.js';

export interface TokenFormState {
  name?: string | undefined;
  expires_at?: string | undefined;
  scopes?: readonly string[] | undefined;
  error?: string | undefined;
}

export interface PersonalAccessTokensView {
  user: UserRecord;
  csrf: string;
  tokens: readonly PersonalAccessTokenRecord[];
  /** Today, YYYY-MM-DD (UTC), to tell expired tokens. */
  today: string;
  form?: TokenFormState;
}

function status(token: PersonalAccessTokenRecord, today: string): string {
  if (token.revoked) return 'Revoked';
  // A token is valid through the whole of its last day (UTC); ISO dates compare as text.
  return token.expires_at !== null && token.expires_at < today ? 'Expired' : 'Active';
}

export function personalAccessTokensPage({ user, csrf, tokens, today, form = {} }: PersonalAccessTokensView): string {
  const described = form.error ? html` aria-describedby="form-error"` : '';
  return signedInPage(
    'Personal access tokens',
    user,
    csrf,
    html`<h1>Personal access tokens</h1>
<p>Use a personal access token in the <code>PRIVATE-TOKEN</code> header instead of a password, for example with two-factor authentication on.</p>
<section aria-labelledby="new-token">
<h2 id="new-token">Add a personal access token</h2>
${formError(form.error)}
<form method="post" action="/profile/personal_access_tokens"${described}>
${csrfField(csrf)}
<div class="field"><label for="token-name">Name</label>
<input id="token-name" name="name" type="text" required maxlength="255" value="${form.name ?? ''}"></div>
<div class="field"><label for="token-expires-at">Expires at</label>
<input id="token-expires-at" name="expires_at" type="date" value="${form.expires_at ?? ''}" aria-describedby="token-expires-hint">
<p class="hint" id="token-expires-hint">The last day the token works; leave empty for no expiry.</p></div>
${scopeCheckboxes('token-scope', form.scopes ?? ['api'], apiScopes)}
<button type="submit">Create personal access token</button>
</form>
</section>
<section aria-labelledby="your-tokens">
<h2 id="your-tokens">Your personal access tokens</h2>
${
  tokens.length === 0
    ? html`<p>You have no personal access tokens.</p>`
    : listTable(
        ['Name', 'Scopes', 'Created', 'Expires', 'Status'],
        tokens.map((t) => ({
          name: t.name,
          cells: [
            t.scopes.join(', '),
            html`<time datetime="${isoOf(t.created_at)}">${isoOf(t.created_at).slice(0, 10)}</time>`,
            t.expires_at === null ? 'Never' : html`<time datetime="${t.expires_at}">${t.expires_at}</time>`,
            status(t, today),
            t.revoked
              ? ''
              : html`<form method="post" action="/profile/personal_access_tokens/${t.id}/revoke">${csrfField(csrf)}<button type="submit" class="danger">Revoke<span class="visually-hidden"> ${t.name}</span></button></form>`,
          ],
        })),
        { actions: true },
      )
}
</section>`,
  );
}

/** Shown once, right after creation: the only time the token's value is ever visible. */
export function tokenCreatedPage(user: UserRecord, csrf: string, token: PersonalAccessTokenRecord, value: string): string {
  return signedInPage(
    `Personal access token: ${token.name}`,
    user,
    csrf,
    html`<h1>Personal access token: ${token.name}</h1>
<p role="status">The token was created.</p>
<div class="field"><label for="token-value">Your new personal access token</label>
<input id="token-value" type="text" readonly value="${value}" aria-describedby="token-value-hint"></div>
<p class="hint" id="token-value-hint">Copy it now. It is not stored and will not be shown again.</p>
<dl>
<dt>Scopes</dt><dd>${token.scopes.join(', ')}</dd>
<dt>Expires</dt><dd>${token.expires_at ?? 'Never'}</dd>
</dl>
<p><a href="/profile/personal_access_tokens">Back to personal access tokens</a></p>`,
  );
}
