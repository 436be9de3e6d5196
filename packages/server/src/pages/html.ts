// Minimal HTML building (every interpolated value goes through `escapeHtml`) and the layout every page shares.
import { version } from '../version.js';

const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => entities[c]!);
}

/** A tagged template whose interpolations are escaped unless they are `SafeHtml` (from `html` itself or `raw`). */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export type Part = SafeHtml | string | number | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof SafeHtml) return part.value;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(part);
}

export function html(strings: TemplateStringsArray, ...values: Part[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((v, i) => {
    out += render(v) + strings[i + 1]!;
  });
  return new SafeHtml(out);
}

/** Who is signed in, for the header: their name and the CSRF token of the sign-out form. */
export interface Visitor {
  user: { username: string };
  csrf: string;
}

export const csrfField = (token: string) => html`<input type="hidden" name="_csrf" value="${token}">`;

/** The product's mark, a bell; the tab's icon (assets.ts) draws the same path. */
export const bellPath =
  'M8 1a1 1 0 0 0-1 1v.6A4.5 4.5 0 0 0 3.5 7v3.5L2 12v1h12v-1l-1.5-1.5V7A4.5 4.5 0 0 0 9 2.6V2a1 1 0 0 0-1-1zM6.3 14a1.8 1.8 0 0 0 3.4 0z';

/**
 * Who is looking at a page: a signed-in visitor, null for one who is not, or undefined where the page does not read
 * the session (an error at a path outside the pages), which shows no account rather than a wrong one.
 */
export type Viewer = Visitor | null | undefined;

// The links a signed-in user has on every page, then who they are and the way out (a form: signing out changes state).
const account = (visitor: Visitor | null) =>
  visitor
    ? html`<ul>
<li><a href="/profile/applications">Applications</a></li>
<li><a href="/profile/personal_access_tokens">Personal access tokens</a></li>
</ul>
<form method="post" action="/users/sign_out">${csrfField(visitor.csrf)}<p>Signed in as <strong>${visitor.user.username}</strong> <button type="submit" class="secondary">Sign out</button></p></form>`
    : html`<ul><li><a href="/users/sign_in">Sign in</a></li></ul>`;

/**
 * A complete page in the one layout every page shares: the product's name and mark, the visitor's account (or a way to
 * sign in), the page, and a footer with the version and the API reference.
 */
export function layout(title: string, body: SafeHtml, visitor: Viewer): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} - tokenbell</title>
<link rel="stylesheet" href="/assets/tokenbell.css">
<link rel="icon" href="/favicon.ico" type="image/svg+xml">
</head>
<body>
<a class="skip-link" href="#content">Skip to content</a>
<header class="site">
<a class="brand" href="/"><svg viewBox="0 0 16 16" width="24" height="24" aria-hidden="true" focusable="false"><path fill="currentColor" d="${bellPath}"/></svg>tokenbell</a>
${visitor === undefined ? '' : html`<nav aria-label="Account">
${account(visitor)}
</nav>`}
</header>
<main id="content">
${body}
</main>
<footer class="site">
<p>tokenbell ${version} · <a href="/help/api">API reference</a> · <a href="/openapi.yaml">OpenAPI document</a></p>
</footer>
</body>
</html>
`.value;
}

/** What went wrong, what to do about it, and a way back: an error page never ends the visit. */
export function errorPage(title: string, message: string, advice: string | undefined, visitor: Viewer): string {
  return layout(
    title,
    html`<h1>${title}</h1>
<p class="error" role="alert">${message}</p>
${advice ? html`<p>${advice}</p>` : ''}
<p><a href="/">Go to the tokenbell home page</a></p>`,
    visitor,
  );
}
