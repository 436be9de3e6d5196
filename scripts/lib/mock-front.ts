// The mock's front: a small HTTP proxy that `npm run mock` (scripts/mock.ts) runs on the mock's public address, with
// Prism behind it on a private loopback port. Prism answers a fixed example and cannot build a header from the
// request (no templating in Prism 5), so the authorization endpoint's redirect would always go to the example's
// callback with the example's state, and a client that checks its state (RFC 6749 section 10.12) could not sign in
// against the mock. The front changes that one answer and nothing else:
//
// * every request goes to Prism first, so Prism still judges it against the document and picks the answer;
// * when Prism answers `GET /oauth/authorize` with its 302 (asked for with `__code=302` or `Prefer: code=302`) to a
//   request it found valid, the front redirects instead, as the server does for a signed-in user who has approved
//   the application: to the request's `redirect_uri` with the example's code (the mock's token endpoint exchanges
//   any) and the request's `state`, provided the client is an application of the example seed and the redirect URI
//   one of its own (the server's rule, domain/oauth/redirect-uris.ts). Otherwise it gives Prism's 400, the error page
//   the document declares: the server never redirects to a redirect URI the application has not registered;
// * every other answer goes back as Prism gave it, status, headers and body, streamed.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, request as httpRequest, type Server, type ServerResponse } from 'node:http';
import { withQuery } from '../../packages/server/src/domain/oauth/authorization.js';
import { matchingRedirectUri } from '../../packages/server/src/domain/oauth/redirect-uris.js';
import { rebase } from './mock-document.js';
import { exampleSeedPath } from './paths.js';

/** An application whose redirects the front carries: its App ID and redirect URIs. */
export interface MockApplication {
  client_id: string;
  redirect_uris: readonly string[];
}

/**
 * The example seed's applications (packages/server/fixtures/example-seed.json, which the document's examples
 * describe: Example App and its redirect URIs), their URIs on the server's default address moved to the mock's,
 * as the mock's document moves its examples (`/demo/callback` is the mock's own).
 */
export function exampleApplications(baseUrl: string): MockApplication[] {
  const seed = JSON.parse(readFileSync(exampleSeedPath, 'utf8')) as { applications?: MockApplication[] };
  return (seed.applications ?? []).map(({ client_id, redirect_uris }) => ({ client_id, redirect_uris: rebase(redirect_uris, baseUrl.replace(/\/+$/, '')) as string[] }));
}

/**
 * Headers that belong to one connection, not to the message (RFC 9110 section 7.6.1): each side's own Node server and
 * client set them for their connection.
 */
const hopByHop = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

/** A message's end-to-end headers as they came (names as spelt, repeated ones repeated), `location` replaced if given. */
function endToEnd(message: IncomingMessage, location?: string): string[] {
  const headers: string[] = [];
  for (let i = 0; i < message.rawHeaders.length; i += 2) {
    const [name, value] = [message.rawHeaders[i]!, message.rawHeaders[i + 1]!];
    if (!hopByHop.has(name.toLowerCase())) headers.push(name, location !== undefined && name.toLowerCase() === 'location' ? location : value);
  }
  return headers;
}

export interface MockFrontOptions {
  /** Where Prism listens (127.0.0.1 and its private port). */
  prism: { host: string; port: number };
  /** Resolves once Prism accepts connections: requests that come earlier wait for it. */
  prismReady: Promise<void>;
  applications: readonly MockApplication[];
}

/** The front's HTTP server, not yet listening. */
export function createMockFront({ prism, prismReady, applications }: MockFrontOptions): Server {
  const ask = (req: IncomingMessage, options: { path: string; headers: string[] }, onAnswer: (answer: IncomingMessage) => void, res: ServerResponse) => {
    const upstream = httpRequest({ host: prism.host, port: prism.port, method: req.method, path: options.path, headers: options.headers }, onAnswer);
    upstream.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(`The mock's Prism did not answer: ${error.message}\n`);
    });
    // A browser that goes away takes its request to Prism with it.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    return upstream;
  };
  const relay = (answer: IncomingMessage, res: ServerResponse, headers = endToEnd(answer)) => {
    res.writeHead(answer.statusCode ?? 502, answer.statusMessage, headers);
    answer.pipe(res);
  };

  return createServer((req, res) => {
    void prismReady.then(() => {
      const upstream = ask(req, { path: req.url ?? '/', headers: endToEnd(req) }, (answer) => {
        const redirect = req.method === 'GET' && answer.statusCode === 302 && authorizeRedirect(req, answer, applications);
        if (!redirect) return relay(answer, res);
        if (redirect.location) return relay(answer, res, endToEnd(answer, redirect.location));
        answer.resume();
        // The error page, as Prism gives the document's 400 for the same request.
        const url = new URL(req.url ?? '/', 'http://mock.invalid');
        for (const name of ['__code', '__example', '__dynamic']) url.searchParams.delete(name);
        ask(req, { path: `${url.pathname}${url.search}`, headers: [...withoutPrefer(endToEnd(req)), 'Prefer', 'code=400'] }, (page) => relay(page, res), res).end();
      }, res);
      req.pipe(upstream);
    });
  });
}

/** Raw headers without Prefer (which may ask for the 302 too). */
function withoutPrefer(headers: string[]): string[] {
  return headers.flatMap((item, i) => (i % 2 === 0 ? (item.toLowerCase() === 'prefer' ? [] : [item, headers[i + 1]!]) : []));
}

/**
 * For Prism's 302 to a valid `GET /oauth/authorize`, where the browser goes instead (`location`), or nothing when the
 * request's client and redirect URI are not a registered pair (the 400 error page then); false for any other answer.
 */
function authorizeRedirect(req: IncomingMessage, answer: IncomingMessage, applications: readonly MockApplication[]): { location?: string } | false {
  const url = new URL(req.url ?? '/', 'http://mock.invalid');
  // A request that breaks the document keeps Prism's answer, and its report of what is wrong.
  if (url.pathname !== '/oauth/authorize' || answer.headers['sl-violations'] !== undefined) return false;
  const example = answer.headers.location;
  const code = example === undefined ? null : new URL(example).searchParams.get('code');
  const clientId = url.searchParams.get('client_id');
  const redirectUri = url.searchParams.get('redirect_uri');
  if (code === null || clientId === null || redirectUri === null) return false;
  const application = applications.find((a) => a.client_id === clientId);
  if (!application || !matchingRedirectUri(application.redirect_uris, redirectUri)) return {};
  return { location: withQuery(redirectUri, { code, state: url.searchParams.get('state') ?? undefined }) };
}
