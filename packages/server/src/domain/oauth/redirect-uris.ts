// Which redirect URI an authorization request may use (RFC 6749 section 3.1.2.3, RFC 9700 section 2.1): the string
// registered, compared exactly (no prefix, wildcard or normalisation, so no open redirect through a lookalike URI),
// with one exception: a native app on the user's machine listens on a loopback port it chooses at run time, so a
// registered `http://127.0.0.1/...` or `http://[::1]/...` URI matches the same URI with any port (RFC 8252
// section 7.3). `localhost` is a name that may resolve elsewhere (RFC 8252 section 8.3) and stays exact.

/** `http://` + a loopback IP literal + an optional port + the rest, taken apart as text so nothing is normalised. */
const loopbackRedirect = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::\d{1,5})?([/?][^]*)?$/;

export function redirectUriMatches(registered: string, requested: string): boolean {
  if (registered === requested) return true;
  const a = loopbackRedirect.exec(registered);
  const b = loopbackRedirect.exec(requested);
  return a !== null && b !== null && a[1] === b[1] && loopbackPath(a[2]) === loopbackPath(b[2]);
}

// An http URI's empty path is `/` (RFC 3986 section 6.2.3), as Doorkeeper compares them on GitLab: git-credential-oauth
// redirects to `http://127.0.0.1:<port>` with no path, and GitLab's application registers `http://127.0.0.1/`.
const loopbackPath = (rest: string | undefined) => (rest === undefined || rest.startsWith('?') ? `/${rest ?? ''}` : rest);

/** The registered URI the request's redirect_uri matches, if any. */
export function matchingRedirectUri(registered: readonly string[], requested: string): string | undefined {
  return registered.find((uri) => redirectUriMatches(uri, requested));
}

const loopbackHosts = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * What a registration page should warn about without refusing it: a plain `http` redirect URI to another machine
 * carries the code over the network unencrypted (RFC 6749 section 3.1.2.1).
 */
export function redirectUriWarnings(uris: readonly string[]): string[] {
  return uris.flatMap((uri) => {
    const url = URL.parse(uri);
    if (url?.protocol !== 'http:' || loopbackHosts.has(url.hostname)) return [];
    return [
      `${uri} uses plain http to another machine, so authorization codes travel unencrypted (RFC 6749 section 3.1.2.1). Use https, or a loopback address (http://127.0.0.1) for an app on the user's own computer.`,
    ];
  });
}
