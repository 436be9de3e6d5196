// What the signed-in pages share: the navigation with the sign-out form, the CSRF field and the scope list.
import { scopeDescriptions, scopes } from '../openapi/document.js';
import type { Scope, UserRecord } from '../domain/storage/records.js';
import { html, layout, type Part, type SafeHtml } from './html.js';

export const describeScope = (scope: Scope): string => scopeDescriptions[scope] ?? scope;

export const csrfField = (token: string) => html`<input type="hidden" name="_csrf" value="${token}">`;

/** Scope checkboxes named `scopes`: the browser repeats the name once per checked box, as the document's field. */
export function scopeCheckboxes(idPrefix: string, checked: readonly string[], among: readonly Scope[] = scopes): SafeHtml {
  return html`<fieldset>
<legend>Scopes</legend>
${among.map(
  (scope) => html`<div class="choice"><input type="checkbox" id="${idPrefix}-${scope}" name="scopes" value="${scope}"${checked.includes(scope) ? html` checked` : ''}>
<label for="${idPrefix}-${scope}"><code>${scope}</code> ${describeScope(scope)}</label></div>
`,
)}</fieldset>`;
}

/** A page for a signed-in user: a header naming them, the navigation, a sign-out button, then `body`. */
export function signedInPage(title: string, user: UserRecord, csrf: string, body: SafeHtml): string {
  return layout(
    title,
    body,
    html`<header>
<nav aria-label="Account">
<ul>
<li><a href="/profile/applications">Applications</a></li>
<li><a href="/profile/personal_access_tokens">Personal access tokens</a></li>
</ul>
<form method="post" action="/users/sign_out">${csrfField(csrf)}<p>Signed in as <strong>${user.username}</strong> <button type="submit">Sign out</button></p></form>
</nav>
</header>`,
  );
}

/** A short error message tied to the form by `aria-describedby="form-error"`. */
export const formError = (message: string | undefined) =>
  message ? html`<p class="error" id="form-error" role="alert">${message}</p>` : '';

export const isoDate = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString().slice(0, 10);

export interface TableRow {
  /** The row's header cell: what the row is (an application's name, a token's name). */
  name: Part;
  /** One cell per column after the first, in order. */
  cells: Part[];
}

/**
 * A table of the user's things whose first column names each row and whose last column, when `actions` is set, holds
 * its buttons. Each cell carries its column's name, so that on a phone, where the stylesheet stacks each row into a
 * block, every value keeps its label (the header row is then hidden visually but still read by screen readers).
 */
export function listTable(columns: readonly string[], rows: readonly TableRow[], { actions = false } = {}): SafeHtml {
  const labels = columns.slice(1);
  return html`<table class="stacking">
<thead><tr>${columns.map((c) => html`<th scope="col">${c}</th>`)}${actions ? html`<th scope="col"><span class="visually-hidden">Actions</span></th>` : ''}</tr></thead>
<tbody>
${rows.map(
  (row) => html`<tr>
<th scope="row">${row.name}</th>
${row.cells.map((cell, i) => (actions && i === labels.length ? html`<td class="actions-cell">${cell}</td>` : html`<td data-label="${labels[i]}">${cell}</td>`))}
</tr>
`,
)}</tbody>
</table>`;
}
