// The applications page: the user's registered OAuth applications, the registration form, and the applications
// the user has authorized.
import type { AuthorizedApplication } from '../domain/authorized-applications.js';
import type { ApplicationRecord, UserRecord } from '../domain/storage/records.js';
import { isConfidential } from '../domain/applications.js';
import { html } from './html.js';
import { csrfField, formError, isoDate, listTable, scopeCheckboxes, signedInPage } from './frame.js';

export interface ApplicationFormState {
  name?: string | undefined;
  redirect_uri?: string | undefined;
  scopes?: readonly string[] | undefined;
  confidential?: boolean | undefined;
  error?: string | undefined;
}

export interface ApplicationsView {
  user: UserRecord;
  csrf: string;
  applications: readonly ApplicationRecord[];
  authorized: readonly AuthorizedApplication[];
  form?: ApplicationFormState;
}

export function applicationsPage(view: ApplicationsView): string {
  const { user, csrf, applications, authorized, form = {} } = view;
  return signedInPage(
    'Applications',
    user,
    csrf,
    html`<h1>Applications</h1>
<section aria-labelledby="new-application">
<h2 id="new-application">Add new application</h2>
${registrationForm(csrf, form)}
</section>
<section aria-labelledby="your-applications">
<h2 id="your-applications">Your applications</h2>
${
  applications.length === 0
    ? html`<p>You have not registered any applications.</p>`
    : listTable(
        ['Name', 'App ID', 'Redirect URIs', 'Scopes'],
        applications.map((a) => ({
          name: a.name,
          cells: [
            html`<code>${a.uid}</code>${isConfidential(a) ? '' : html`<p class="hint">Public client</p>`}`,
            html`<ul class="plain">${a.redirect_uris.map((u) => html`<li><code>${u}</code></li>`)}</ul>`,
            a.scopes.join(', '),
            html`<form method="post" action="/profile/applications/${a.id}/delete">${csrfField(csrf)}<button type="submit" class="danger">Delete<span class="visually-hidden"> ${a.name}</span></button></form>`,
          ],
        })),
        { actions: true },
      )
}
</section>
<section aria-labelledby="authorized-applications">
<h2 id="authorized-applications">Authorized applications</h2>
${
  authorized.length === 0
    ? html`<p>You have not authorized any applications to use your account.</p>`
    : listTable(
        ['Name', 'Scopes', 'Authorized since'],
        authorized.map((a) => {
          const name = a.application?.name ?? 'Password grant';
          const action = a.application ? `/profile/authorized_applications/${a.application.id}/revoke` : '/profile/authorized_applications/password_grant/revoke';
          return {
            name: html`${name}${a.application ? '' : html`<p class="hint">Tokens issued for your password without an application</p>`}`,
            cells: [
              a.scopes.join(', '),
              html`<time datetime="${new Date(a.since * 1000).toISOString()}">${isoDate(a.since)}</time>`,
              html`<form method="post" action="${action}">${csrfField(csrf)}<button type="submit" class="danger">Revoke<span class="visually-hidden"> ${name}</span></button></form>`,
            ],
          };
        }),
        { actions: true },
      )
}
</section>`,
  );
}

function registrationForm(csrf: string, form: ApplicationFormState) {
  const described = form.error ? html` aria-describedby="form-error"` : '';
  return html`${formError(form.error)}
<form method="post" action="/profile/applications"${described}>
${csrfField(csrf)}
<div class="field"><label for="application-name">Name</label>
<input id="application-name" name="name" type="text" required maxlength="255" value="${form.name ?? ''}"></div>
<div class="field"><label for="application-redirect-uri">Redirect URIs</label>
<textarea id="application-redirect-uri" name="redirect_uri" rows="3" maxlength="8192" aria-describedby="redirect-uri-hint">${form.redirect_uri ?? ''}</textarea>
<p class="hint" id="redirect-uri-hint">One absolute URI per line, without a fragment. Leave it empty for a command-line tool that signs in with the device flow.</p></div>
${scopeCheckboxes('application-scope', form.scopes ?? ['api'])}
${confidentialChoice(form.confidential ?? true)}
<button type="submit">Save application</button>
</form>`;
}

/** The service's "Confidential" choice, as two radio buttons so that leaving it alone means confidential. */
function confidentialChoice(confidential: boolean) {
  const option = (value: 'true' | 'false', label: string, hint: string) =>
    html`<div class="choice"><input type="radio" id="application-confidential-${value}" name="confidential" value="${value}"${confidential === (value === 'true') ? html` checked` : ''}>
<label for="application-confidential-${value}">${label}</label> <span class="hint">${hint}</span></div>`;
  return html`<fieldset>
<legend>Client type</legend>
${option('true', 'Confidential', 'A server-side app that keeps its App Secret private.')}
${option('false', 'Public', 'A browser or mobile app that cannot keep a secret: no App Secret, PKCE required.')}
</fieldset>`;
}

/** Shown once, right after registration: the only time the App Secret is ever visible. */
export function applicationCreatedPage(user: UserRecord, csrf: string, application: ApplicationRecord, secret: string | null, warnings: readonly string[] = []): string {
  return signedInPage(
    `Application: ${application.name}`,
    user,
    csrf,
    html`<h1>Application: ${application.name}</h1>
<p role="status">The application was registered.</p>
<div class="field"><label for="app-id">App ID</label>
<input id="app-id" type="text" readonly value="${application.uid}"></div>
${
  secret === null
    ? html`<p>This is a public client: it has no App Secret. It identifies itself with its App ID and must send a PKCE challenge (S256) with every authorization request.</p>`
    : html`<div class="field"><label for="app-secret">App Secret</label>
<input id="app-secret" type="text" readonly value="${secret}" aria-describedby="app-secret-hint"></div>
<p class="hint" id="app-secret-hint">Copy the App Secret now. It is not stored and will not be shown again.</p>`
}
<h2>Redirect URIs</h2>
<ul>${application.redirect_uris.map((u) => html`<li><code>${u}</code></li>`)}</ul>
${warnings.map((w) => html`<p class="warning" role="note">${w}</p>`)}
<h2>Scopes</h2>
<p>${application.scopes.join(', ')}</p>
<p><a href="/profile/applications">Back to applications</a></p>`,
  );
}
