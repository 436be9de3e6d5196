// What the signed-in pages share: the layout with the visitor's account, the CSRF field and the scope list.
import { scopeDescriptions, scopes } from '../openapi/document.js';
import type { Scope, UserRecord } from '../domain/storage/records.js';
import { csrfField, html, layout, type Part, type SafeHtml } from './html.js';

export { csrfField } from './html.js';

export const describeScope = (scope: Scope): string => scopeDescriptions[scope] ?? scope;

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

/** A page for a signed-in user: the layout's header names them and offers sign-out. */
export const signedInPage = (title: string, user: UserRecord, csrf: string, body: SafeHtml): string => layout(title, body, { user, csrf });

/**
 * Who registered the application a user is asked to trust, and what it may do, each scope in the service's words; the
 * consent and device confirmation pages share it.
 */
export const applicationRequest = (owner: UserRecord | undefined, scopes: readonly Scope[]) => html`${
  owner ? html`<p>This application was created by <strong>${owner.name}</strong> (@${owner.username}). It is not provided by tokenbell: make sure you trust it before you allow access.</p>
` : ''
}<h2 id="scopes-heading">This application will be able to:</h2>
<ul aria-labelledby="scopes-heading">
${scopes.map((s) => html`<li><code>${s}</code>: ${describeScope(s)}</li>
`)}</ul>`;

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
