// A browser stand-in for the pages' tests: fetch with a cookie jar and manual redirects, so each redirect's
// Location and each Set-Cookie can be asserted on.

/** A cookie-keeping client that never follows redirects. */
export class Agent {
  readonly cookies = new Map<string, string>();
  /** The Set-Cookie lines of the last answer, for tests about the cookie's attributes. */
  lastSetCookies: string[] = [];

  constructor(readonly baseUrl: string) {}

  /** `path` is relative to the base URL, or absolute (a redirect's Location). */
  async request(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const url = path.startsWith('http') ? path : this.baseUrl + path;
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    // Read to its end, as a browser reads a page before the next click: express-session holds an answer's last byte
    // back until the session is saved, so a next request sent on the headers alone could overtake the save and meet
    // the session as it was (on a busy PostgreSQL run, an active session read as idle for 8 hours).
    await response.clone().arrayBuffer();
    this.lastSetCookies = response.headers.getSetCookie();
    for (const line of this.lastSetCookies) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }

  get(path: string, headers: Record<string, string> = {}) {
    return this.request(path, { headers });
  }

  /** A form post; an array value sends the field once per item, as a multi-select does. */
  post(path: string, fields: Record<string, string | string[]>, headers: Record<string, string> = {}) {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) for (const item of [v].flat()) body.append(k, item);
    return this.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: body.toString(),
    });
  }

  get sid(): string | undefined {
    return this.cookies.get('tokenbell.sid');
  }
}

export const csrfOf = (page: string): string => {
  const match = /name="_csrf" value="([^"]+)"/.exec(page);
  if (!match) throw new Error(`no CSRF token in the page:\n${page.slice(0, 2000)}`);
  return match[1]!;
};

/** Signs in through the form; answers the sign-in response (302 on success). */
export async function signIn(agent: Agent, login: string, password: string, headers: Record<string, string> = {}): Promise<Response> {
  const page = await (await agent.get('/users/sign_in', headers)).text();
  return agent.post('/users/sign_in', { _csrf: csrfOf(page), login, password }, headers);
}

const unescapeHtml = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/** The consent form's hidden fields (the authorization request and the CSRF token), as a browser would post them. */
export function consentFields(page: string): Record<string, string> {
  const form = /<form method="post" action="\/oauth\/authorize">([\s\S]*?)<\/form>/.exec(page)?.[1];
  if (!form) throw new Error(`no consent form in the page:\n${page.slice(0, 2000)}`);
  const fields: Record<string, string> = {};
  for (const m of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[m[1]!] = unescapeHtml(m[2]!);
  return fields;
}

/** Opens an authorization request in the agent's (signed-in) session and approves it; answers the approval. */
export async function approveAuthorization(agent: Agent, authorizationUrl: string): Promise<Response> {
  const page = await agent.get(authorizationUrl);
  // No consent page for a confidential application the user already holds a live token of with these scopes: the
  // endpoint redirects with a code at once, as the service does.
  if (page.status === 302) return page;
  return agent.post('/oauth/authorize', { ...consentFields(await page.text()), decision: 'approve' });
}

/** The device verification pages, as `agent`: the code form, the confirmation and the decision; answers the decision's response. */
export async function answerDeviceCode(agent: Agent, typed: string, decision: 'approve' | 'deny'): Promise<Response> {
  const codeForm = await agent.get(`/oauth/device?user_code=${encodeURIComponent(typed)}`);
  if (codeForm.status !== 200) throw new Error(`the device code form answered ${codeForm.status}`);
  const confirm = await agent.post('/oauth/device/confirm', { _csrf: csrfOf(await codeForm.text()), user_code: typed });
  const page = await confirm.text();
  if (confirm.status !== 200) throw new Error(`the confirmation answered ${confirm.status}:\n${page.slice(0, 2000)}`);
  const userCode = /name="user_code" value="([^"]+)"/.exec(page)![1]!;
  return agent.post('/oauth/device', { _csrf: csrfOf(page), user_code: userCode, decision });
}
