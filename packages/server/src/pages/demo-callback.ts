// Where the demo application's authorization ends: the code (or the error) the authorization endpoint sent, and the
// exact request that exchanges the code for tokens, so a first try of the flow ends somewhere useful.
import { html, layout, type Viewer } from './html.js';

export interface DemoCallback {
  baseUrl: string;
  redirectUri: string;
  code?: string | undefined;
  state?: string | undefined;
  error?: string | undefined;
  errorDescription?: string | undefined;
  visitor: Viewer;
}

export function demoCallbackPage({ baseUrl, redirectUri, code, state, error, errorDescription, visitor }: DemoCallback): string {
  if (error !== undefined || code === undefined) {
    return layout(
      'Authorization not granted',
      html`<h1>Authorization not granted</h1>
<p class="error" role="alert"><code>${error ?? 'no code'}</code>${errorDescription ? html`: ${errorDescription}` : ''}</p>
${state === undefined ? '' : html`<p>State: <code>${state}</code></p>`}
<p><a href="/">Back to the start</a></p>`,
      visitor,
    );
  }
  const command = `curl -X POST ${baseUrl}/oauth/token -u 'CLIENT_ID:CLIENT_SECRET' -d grant_type=authorization_code -d code=${code} --data-urlencode redirect_uri=${redirectUri}`;
  return layout(
    'Authorization code',
    html`<h1>Authorization code</h1>
<p>The authorization endpoint sent this page the code below. Exchange it at the token endpoint within 10 minutes; it works once.</p>
<div class="field"><label for="code">Code</label><input id="code" type="text" readonly value="${code}"></div>
${state === undefined ? '' : html`<div class="field"><label for="state">State</label><input id="state" type="text" readonly value="${state}"></div>`}
<h2>Exchange it</h2>
<p>With the demo application's App ID and App Secret (printed when the server first started) in place of <code>CLIENT_ID:CLIENT_SECRET</code>; add <code>-d code_verifier=...</code> if the request carried a PKCE challenge:</p>
<pre><code>${command}</code></pre>
<p><a href="/">Back to the start</a></p>`,
    visitor,
  );
}
