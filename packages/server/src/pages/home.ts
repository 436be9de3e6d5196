// The landing page at /: where a visitor starts, signed in or not.
import type { UserRecord } from '../domain/storage/records.js';
import { signedInPage } from './frame.js';
import { html, layout } from './html.js';

const documentLinks = html`<h2>The API</h2>
<p><a href="/help/api">The API reference</a> shows every endpoint and lets you try them against this server. The OpenAPI document behind it: <a href="/openapi.yaml">openapi.yaml</a> (also as <a href="/openapi.json">JSON</a>). API paths live under <code>/api/v3</code>; the OAuth server's metadata is at <a href="/.well-known/oauth-authorization-server">/.well-known/oauth-authorization-server</a>.</p>`;

export function homePage(user: UserRecord | undefined, csrf: string | undefined): string {
  if (!user || csrf === undefined) {
    return layout(
      'tokenbell',
      html`<h1>tokenbell</h1>
<p>An OAuth 2.0 provider and the notification settings API v3.</p>
<p><a href="/users/sign_in">Sign in</a> to register applications, see the applications you have authorized and create personal access tokens.</p>
${documentLinks}`,
      null,
    );
  }
  return signedInPage(
    'tokenbell',
    user,
    csrf,
    html`<h1>Welcome, ${user.name}</h1>
<ul>
<li><a href="/profile/applications">Applications</a>: register your OAuth applications, and revoke the access of those you have authorized.</li>
<li><a href="/profile/personal_access_tokens">Personal access tokens</a>: tokens for scripts and for accounts with two-factor authentication.</li>
</ul>
${documentLinks}`,
  );
}
