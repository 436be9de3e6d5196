// The API reference page at /help/api (the service keeps its API help under /help/api): Swagger UI rendering the
// instance's own OpenAPI document, with "Try it out" against this instance. Its script and stylesheets come from
// this origin, so the page's CSP allows scripts from 'self' and nothing inline.
import { html } from './html.js';
import { referenceAssetsPath, referenceOAuthRedirectPath } from './reference-paths.js';

export { referenceAssetsPath, referenceOAuthRedirectPath, referencePath } from './reference-paths.js';

/**
 * Starts Swagger UI on the served document, with the document's `base_url` server variable and its OAuth URLs set
 * to this instance (the document's defaults name a local instance on port 3000). No validator badge: it would
 * send the document to a third party.
 */
export const referenceScript = `'use strict';
(function () {
  var root = document.getElementById('swagger-ui');
  var baseUrl = root.getAttribute('data-base-url');
  var defaultBase = 'http://127.0.0.1:3000';
  var here = function (url) { return url.indexOf(defaultBase) === 0 ? baseUrl + url.slice(defaultBase.length) : url; };
  fetch(root.getAttribute('data-document'), { headers: { Accept: 'application/json' } })
    .then(function (response) {
      if (!response.ok) throw new Error('the OpenAPI document answered ' + response.status);
      return response.json();
    })
    .then(function (spec) {
      // Swagger UI knows only the OAS base dialect and shows a warning for any other; the document declares plain
      // JSON Schema 2020-12 (for Prism), which renders the same.
      delete spec.jsonSchemaDialect;
      (spec.servers || []).forEach(function (server) {
        if (server.variables && server.variables.base_url) server.variables.base_url.default = baseUrl;
      });
      var schemes = (spec.components && spec.components.securitySchemes) || {};
      Object.keys(schemes).forEach(function (name) {
        var flows = schemes[name].flows || {};
        Object.keys(flows).forEach(function (kind) {
          ['authorizationUrl', 'tokenUrl', 'refreshUrl'].forEach(function (key) {
            if (flows[kind][key]) flows[kind][key] = here(flows[kind][key]);
          });
        });
      });
      window.ui = SwaggerUIBundle({ spec: spec, dom_id: '#swagger-ui', deepLinking: true, validatorUrl: null, oauth2RedirectUrl: baseUrl + '${referenceOAuthRedirectPath}' });
      // "Authorize" runs the authorization code grant with PKCE (S256), as a public client must and any client should.
      window.ui.initOAuth({ usePkceWithAuthorizationCodeGrant: true });
    })
    .catch(function (error) {
      root.textContent = 'The API reference could not be shown: ' + error.message + '. The document itself is at ' + root.getAttribute('data-document') + '.';
    });
})();
`;

export const referenceStylesheet = `body { margin: 0; }
.tokenbell-bar { display: flex; flex-wrap: wrap; gap: 1rem; align-items: baseline; padding: 0.5rem 1rem; border-bottom: 1px solid #8884;
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; }
.tokenbell-bar a { color: #1f75cb; }
`;

export function referencePage(baseUrl: string): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference - tokenbell</title>
<link rel="stylesheet" href="${referenceAssetsPath}/swagger-ui.css">
<link rel="icon" href="/favicon.ico" type="image/svg+xml">
<link rel="stylesheet" href="${referenceAssetsPath}/reference.css">
</head>
<body>
<nav class="tokenbell-bar" aria-label="tokenbell"><a href="/">tokenbell</a><span>API reference</span><a href="/openapi.yaml">openapi.yaml</a><a href="/openapi.json">openapi.json</a></nav>
<main id="swagger-ui" data-document="/openapi.json" data-base-url="${baseUrl}"><noscript>The API reference needs JavaScript; the document itself is at <a href="/openapi.yaml">/openapi.yaml</a>.</noscript></main>
<script src="${referenceAssetsPath}/swagger-ui-bundle.js"></script>
<script src="${referenceAssetsPath}/reference.js"></script>
</body>
</html>
`.value;
}
