// Property-based hostile input on every operation of the document, over real HTTP: arbitrary query strings,
// headers, form and JSON bodies. Whatever arrives, the answer is never a 5xx, never a stack trace or an internal
// path, always in the format of its area, and a rejected request changes nothing in the store.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonalAccessToken } from '../../src/domain/accounts.js';
import { digest } from '../../src/domain/secrets.js';
import { type ErrorFormat, errorFormatOf } from '../../src/http/areas.js';
import { document } from '../../src/openapi/document.js';
import { Agent, csrfOf, signIn } from '../support/agent.js';
import { seed, startTestServer, type TestServer } from '../support/server.js';
import { bodilessRequest, rawRequest, type RawResponse } from './support.js';

const fcSeed = Number(process.env.TOKENBELL_FUZZ_SEED ?? 4_2026);
const numRuns = Number(process.env.TOKENBELL_FUZZ_RUNS ?? 2000);
const bodyLimit = 100 * 1024;

interface Operation {
  method: string;
  template: string;
  /** Names the document gives the operation's query parameters and body fields. */
  names: string[];
  hasBody: boolean;
}

/** Every operation, read from the document rather than listed here, so a new route is fuzzed as soon as it exists. */
function operations(): Operation[] {
  const schemas = document.components.schemas as Record<string, { properties?: Record<string, unknown>; oneOf?: Array<{ $ref: string }> }>;
  const fieldsOf = (schema: unknown): string[] => {
    const s = schema as { $ref?: string; properties?: Record<string, unknown>; oneOf?: unknown[] } | undefined;
    if (!s) return [];
    if (s.$ref) return fieldsOf(schemas[s.$ref.split('/').pop()!]);
    return [...Object.keys(s.properties ?? {}), ...(s.oneOf ?? []).flatMap(fieldsOf)];
  };
  const ops: Operation[] = [];
  for (const [template, item] of Object.entries(document.paths as Record<string, Record<string, unknown>>)) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch']) {
      const op = item[method] as { parameters?: Array<{ name?: string; $ref?: string }>; requestBody?: { content: Record<string, { schema: unknown }> } } | undefined;
      if (!op) continue;
      const params = (op.parameters ?? []).map((p) => p.name ?? p.$ref!.split('/').pop()!);
      const bodyFields = Object.values(op.requestBody?.content ?? {}).flatMap((c) => fieldsOf(c.schema));
      ops.push({ method: method.toUpperCase(), template, names: [...new Set([...params, ...bodyFields, 'access_token', '_csrf'])], hasBody: !!op.requestBody });
    }
  }
  return ops;
}

/** The error format of a request for `url` (a path with any query), decided as the server decides it. */
const formatOf = (url: string): ErrorFormat => errorFormatOf(url.split('?')[0]!);

// ---- generators -------------------------------------------------------------------------------------------

const pollutingKeys = ['__proto__', 'constructor', 'prototype', '__proto__[polluted]', 'constructor[prototype][polluted]', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];
const badPercent = ['%', '%2', '%zz', '%E0%A4%A', '%C0%AF', '%FF%FE', '%00', '%ED%A0%80', '%F4%90%80%80'];
const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('', ' ', 'true', 'false', '1', '-1', '0', '1e999', 'NaN', 'null', 'undefined', '[]', '{}', 'watch', 'custom', 'global', 'api', 'password', 'code', '../../etc/passwd', '<script>alert(1)</script>', "' OR 1=1 --", 'a'.repeat(5000)),
  fc.constantFrom(...badPercent),
);

/** One query or form pair, encoded as a hostile client might: brackets, deep nesting, raw bytes, bad escapes. */
const pair = (names: string[]) =>
  fc
    .tuple(
      fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...names) }, { weight: 2, arbitrary: fc.constantFrom(...pollutingKeys) }, { weight: 1, arbitrary: fc.string({ maxLength: 12 }) }),
      text,
      fc.constantFrom('plain', 'plain', 'array', 'index', 'object', 'deep', 'raw', 'bare', 'badKey'),
      fc.integer({ min: 2, max: 40 }),
    )
    .map(([key, value, shape, depth]) => {
      const k = encodeURIComponent(key);
      const v = encodeURIComponent(value);
      switch (shape) {
        case 'array':
          return `${k}[]=${v}`;
        case 'index':
          return `${k}[${depth * 1000}]=${v}`;
        case 'object':
          return `${k}[${encodeURIComponent(pollutingKeys[depth % pollutingKeys.length]!)}]=${v}`;
        case 'deep':
          return `${k}${'[a]'.repeat(depth)}=${v}`;
        case 'raw':
          // Unescaped printable characters a browser would have escaped, then escapes of invalid UTF-8. (Raw bytes
          // above 0x7f never reach the application: Node's HTTP parser answers them with a bare 400 itself.)
          return `${k}=${value.replace(/[^\x21-\x7e]|[#&]/g, '')}${badPercent[depth % badPercent.length]}%FF%FE`;
        case 'bare':
          return k;
        case 'badKey':
          return `${badPercent[depth % badPercent.length]}${k}=${v}`;
        default:
          return `${k}=${v}`;
      }
    });

const pairs = (names: string[]) => fc.array(pair(names), { maxLength: 8 }).map((list) => list.join('&'));

const jsonValue = fc.jsonValue({ maxDepth: 4 });
const jsonBody = (names: string[]) =>
  fc.oneof(
    fc.dictionary(fc.oneof(fc.constantFrom(...names), fc.constantFrom('__proto__', 'constructor', 'prototype')), jsonValue, { maxKeys: 8 }).map((o) => JSON.stringify(o)),
    jsonValue.map((v) => JSON.stringify(v)),
    fc.constantFrom(
      '{"__proto__":{"polluted":1,"level":"watch"}}',
      '{"constructor":{"prototype":{"polluted":1}}}',
      '{"level":"watch","level":"custom"}',
      '{"a":1,}',
      '{',
      'null',
      'true',
      '"string"',
      '[{"__proto__":{"polluted":1}}]',
    ),
    fc.integer({ min: 10, max: 20_000 }).map((n) => '['.repeat(n) + ']'.repeat(n)),
    fc.integer({ min: 10, max: 5_000 }).map((n) => '{"a":'.repeat(n) + '1' + '}'.repeat(n)),
  );

const contentTypes = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'application/json; charset=nope',
  'application/x-www-form-urlencoded',
  'application/x-www-form-urlencoded; charset=iso-8859-1',
  'text/plain',
  'multipart/form-data; boundary=x',
  'application/xml',
  '*/*',
  'application/',
  ';;;',
];

type Body = { contentType?: string; encoding?: string; bytes: Buffer } | null;
/** Counterexamples print a body's first bytes only: a 300 kB body in a report helps nobody. */
const printable = (b: NonNullable<Body>): NonNullable<Body> =>
  Object.assign(b, {
    [fc.toStringMethod]: () =>
      `{contentType: ${JSON.stringify(b.contentType)}, encoding: ${JSON.stringify(b.encoding)}, ${b.bytes.length} bytes: ${JSON.stringify(b.bytes.subarray(0, 120).toString('latin1'))}}`,
  });
const body = (names: string[]): fc.Arbitrary<Body> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constant(null) },
    { weight: 4, arbitrary: fc.tuple(jsonBody(names), fc.constantFrom(...contentTypes.slice(0, 4), undefined)).map(([b, ct]) => printable({ contentType: ct, bytes: Buffer.from(b) })) },
    { weight: 4, arbitrary: fc.tuple(pairs(names), fc.constantFrom(...contentTypes.slice(4, 6), 'application/json')).map(([b, ct]) => printable({ contentType: ct, bytes: Buffer.from(b, 'latin1') })) },
    { weight: 1, arbitrary: fc.tuple(fc.uint8Array({ maxLength: 200 }), fc.constantFrom(...contentTypes)).map(([b, ct]) => printable({ contentType: ct, bytes: Buffer.from(b) })) },
    { weight: 1, arbitrary: fc.tuple(fc.uint8Array({ maxLength: 50 }), fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'x-unknown')).map(([b, enc]) => printable({ contentType: 'application/json', encoding: enc, bytes: Buffer.from(b) })) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('application/json', 'application/x-www-form-urlencoded'), fc.integer({ min: bodyLimit + 1, max: bodyLimit * 3 })).map(([ct, size]) =>
      printable({ contentType: ct, bytes: Buffer.from(ct === 'application/json' ? `{"name":"${'x'.repeat(size)}"}` : `name=${'x'.repeat(size)}`) }),
    ) },
  );

const headerValue = fc.string({ maxLength: 60 }).map((s) => s.replace(/[^\x20-\x7e]/g, ''));

// ---- the server ---------------------------------------------------------------------------------------------

let server: TestServer;
/** A personal access token of jsmith's that no later case needs. */
async function throwawayToken(): Promise<string> {
  const jsmith = await server.storage.users.byUsername('jsmith');
  return (await createPersonalAccessToken(server.storage, jsmith!.id, { name: 'throwaway', scopes: ['read_user'] })).token;
}
let agent: Agent;
let csrf = '';
let bearer = '';

/** A signed-in session with a CSRF token, so forms get past the CSRF check and reach validation and handlers. */
async function ensureSession(): Promise<void> {
  const sid = agent.sid && decodeURIComponent(agent.sid).replace(/^s:/, '').split('.')[0]!;
  // Asked at time 0: the stored session whatever its expiry, as the check always was.
  if (sid && (await server.storage.sessions.find(digest(sid), 0))?.userId) return;
  agent.cookies.clear();
  expect((await signIn(agent, seed.jsmith.username, seed.jsmith.password)).status).toBe(302);
  csrf = csrfOf(await (await agent.get('/profile/applications')).text());
}

beforeAll(async () => {
  server = await startTestServer();
  agent = new Agent(server.baseUrl);
  await ensureSession();
  const token = await fetch(`${server.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', username: seed.jsmith.username, password: seed.jsmith.password }),
  });
  bearer = ((await token.json()) as { access_token: string }).access_token;
});
afterAll(() => server.close());

/** The store as it would be written, without what merely reading a page may touch (a session's expiry). */
async function snapshot(): Promise<string> {
  // A session's bookkeeping (when it expires, when it was last seen, its cookie) moves with every request it makes.
  const untouched = (key: string, value: unknown) => (key === 'cookie' || key === 'seenAt' ? undefined : value);
  // Every collection or table; not the sign-in throttle's counters, which the file store keeps in memory, outside its
  // data. On both stores a session's expiry is its record's expires_at.
  const { sessions = [], ...rest } = server.kind === 'file' ? (server.store.data as unknown as Record<string, unknown>) : await server.tables(['rate_limits']);
  const withoutExpiry = (sessions as Array<Record<string, unknown>>).map(({ expires_at: _expiry, ...session }) => session);
  return JSON.stringify({ ...rest, sessions: withoutExpiry }, untouched);
}

const leaks = [/\n\s+at /, /node_modules/, /\/work\//, /file:\/\//, /\.[cm]?[jt]s:\d+/, /\b(TypeError|ReferenceError|RangeError|SyntaxError)\b/, /\bERR_[A-Z_]+\b/];
/** Messages that name a route as the validator spells it internally, or a value the server failed to fill in. */
const unclear = [/\bv3\.(groups|projects)\./, /media type undefined/, /malformed uri/];

function checkAnswer(format: ErrorFormat, sentBytes: number, response: RawResponse): void {
  expect(response.status, response.body.slice(0, 500)).toBeLessThan(500);
  for (const leak of [...leaks, ...unclear]) expect(response.body, `${leak} in ${response.body.slice(0, 500)}`).not.toMatch(leak);
  if (sentBytes > bodyLimit) expect(response.status).toBe(413);
  if (response.status < 400) return;
  const type = response.headers['content-type'] ?? '';
  const what = `${response.status} ${type} ${response.body.slice(0, 300)}`;
  if (format === 'page') {
    expect(type, what).toMatch(/^text\/html/);
    expect(response.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    return;
  }
  expect(type, what).toMatch(/^application\/json/);
  const parsed = JSON.parse(response.body) as Record<string, unknown>;
  if (format === 'message') expect(Object.keys(parsed)).toEqual(['message']);
  else expect(typeof parsed.error).toBe('string');
  if (response.status === 413) {
    if (format === 'message') expect(parsed).toEqual({ message: '413 Request Entity Too Large' });
    else expect(parsed.error).toBe('invalid_request');
  }
}

describe('hostile input on every operation of the document', () => {
  const ops = operations();

  it('reads every operation from the document', () => {
    expect(ops.length).toBeGreaterThanOrEqual(20);
    expect(ops.map((o) => `${o.method} ${o.template}`)).toContain('PUT /api/v3/projects/{id}/notification_settings');
  });

  it('answers a body over the documented limit with 413 in the format of its area, and one at the limit is read', async () => {
    const withBody = ops.filter((o) => o.hasBody);
    expect(withBody.length).toBeGreaterThanOrEqual(14);
    for (const op of withBody) {
      const path = op.template.replace(/\{[^}]+\}/g, '1');
      // Every documented 413 is answered; the document's response names the area's format.
      const documented = document.paths[op.template][op.method.toLowerCase()].responses['413'] as { $ref: string } | undefined;
      expect(documented?.$ref, `${op.method} ${op.template}`).toMatch(/PayloadTooLarge$/);
      for (const contentType of ['application/json', 'application/x-www-form-urlencoded']) {
        const sized = (n: number) => (contentType === 'application/json' ? `{"name":"${'x'.repeat(n - 11)}"}` : `name=${'x'.repeat(n - 5)}`);
        const headers = { 'content-type': contentType, 'private-token': seed.jsmith.pat, cookie: `tokenbell.sid=${agent.sid}` };
        const before = await snapshot();
        const over = await rawRequest(server.baseUrl, op.method, path, headers, sized(bodyLimit + 1));
        expect(over.status, `${op.method} ${path} ${contentType}`).toBe(413);
        checkAnswer(formatOf(path), bodyLimit + 1, over);
        if (formatOf(path) === 'page') expect(over.body).toContain('The form sent more than this server accepts.');
        expect(await snapshot()).toBe(before);
        const at = await rawRequest(server.baseUrl, op.method, path, headers, sized(bodyLimit));
        expect(at.status, `${op.method} ${path} ${contentType} at the limit`).not.toBe(413);
      }
    }
  });

  it('reads a request that sends no body at all as an empty form, refused in its area\'s format, never 5xx', async () => {
    // The test helpers' area is off on this server (404 for everything under it).
    const needing = ops.filter((o) => o.hasBody && document.paths[o.template][o.method.toLowerCase()].requestBody.required === true && !o.template.includes('/test_helpers/'));
    expect(needing.map((o) => o.template)).toEqual(expect.arrayContaining(['/oauth/token', '/oauth/authorize_device']));
    for (const op of needing) {
      const path = op.template.replace(/\{[^}]+\}/g, '1');
      for (const contentType of Object.keys(document.paths[op.template][op.method.toLowerCase()].requestBody.content as object)) {
        const before = await snapshot();
        const answer = await bodilessRequest(server.baseUrl, op.method, path, { 'content-type': contentType, 'private-token': seed.jsmith.pat, cookie: `tokenbell.sid=${agent.sid}` });
        // Read as an empty form: a page form is refused by its CSRF check (403), an OAuth endpoint that may authenticate
        // its client by HTTP Basic says invalid_client (401), everything else 400 for the fields it lacks.
        const what = `${op.method} ${path} ${contentType}: ${answer.body.slice(0, 300)}`;
        checkAnswer(formatOf(path), 0, answer);
        if (formatOf(path) === 'page') expect(answer.status, what).toBe(403);
        else if (formatOf(path) === 'message') expect(answer.status, what).toBe(400);
        else expect([[400, 'invalid_request'], [401, 'invalid_client']], what).toContainEqual([answer.status, (JSON.parse(answer.body) as { error: string }).error]);
        expect(await snapshot()).toBe(before);
      }
    }
  });

  it('never answers 5xx, never leaks internals, and a rejected request changes nothing', async () => {
    let cases = 0;
    const statuses = new Map<number, number>();
    // The query and body generators use the operation's own parameter names, so many cases get past the parsers
    // into validation and the handlers rather than failing at the first unknown name.
    const request = fc.constantFrom(...ops).chain((op) =>
      fc.record({
        op: fc.constant(op),
        pathValue: fc.oneof(
          fc.constantFrom('1', '3', 'opensource%2Fbell', '0', '-1', '999999999999999999999', '%', '%E0%A4%A', '..', '%2e%2e', '%00', '__proto__', 'constructor'),
          text.map(encodeURIComponent),
        ),
        query: fc.oneof({ weight: 3, arbitrary: fc.constant('') }, { weight: 6, arbitrary: pairs(op.names) }, { weight: 1, arbitrary: fc.constant('__proto__[polluted]=1&constructor[prototype][polluted]=1') }),
        auth: fc.constantFrom('none', 'pat', 'bearer', 'session', 'garbage', 'basic'),
        csrfInBody: fc.boolean(),
        extraHeaders: fc.dictionary(
          fc.constantFrom('authorization', 'private-token', 'accept', 'accept-charset', 'origin', 'x-http-method-override', 'cookie', 'content-language'),
          headerValue,
          { maxKeys: 3 },
        ),
        body: body(op.names),
      }),
    );
    await fc.assert(
      fc.asyncProperty(request, fc.context(), async (r, ctx) => {
        const { op, query } = r;
        let sentBody = r.body;
        if (sentBody && r.csrfInBody && sentBody.contentType?.startsWith('application/x-www-form-urlencoded')) {
          sentBody = { ...sentBody, bytes: Buffer.concat([Buffer.from(`_csrf=${encodeURIComponent(csrf)}&`), sentBody.bytes]) };
        }
        const path = op.template.replace(/\{[^}]+\}/g, r.pathValue) + (query ? `?${query}` : '');
        const headers: Record<string, string> = {};
        // The token in hand revokes itself on request (personal_access_tokens/self): it gets a token of its own to
        // revoke, so that jsmith's stays good for every later case.
        if (r.auth === 'pat') headers['private-token'] = op.method === 'DELETE' && op.template.endsWith('/personal_access_tokens/self') ? await throwawayToken() : seed.jsmith.pat;
        if (r.auth === 'bearer') headers.authorization = `Bearer ${bearer}`;
        if (r.auth === 'session') headers.cookie = `tokenbell.sid=${agent.sid}`;
        if (r.auth === 'garbage') headers.authorization = 'Bearer \xff\xfe';
        if (r.auth === 'basic') headers.authorization = `Basic ${Buffer.from(`${seed.client.id}:%E0%A4%A:${'x'.repeat(300)}`).toString('base64')}`;
        Object.assign(headers, r.extraHeaders);
        if (sentBody?.contentType) headers['content-type'] = sentBody.contentType;
        if (sentBody?.encoding) headers['content-encoding'] = sentBody.encoding;
        ctx.log(`${op.method} ${path.slice(0, 200)} ${JSON.stringify(headers).slice(0, 300)} ${sentBody?.bytes.subarray(0, 200).toString('latin1') ?? ''}`);

        const before = await snapshot();
        const response = await rawRequest(server.baseUrl, op.method, path, headers, sentBody?.bytes);
        cases++;
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        checkAnswer(formatOf(path), sentBody?.bytes.length ?? 0, response);
        if (response.status >= 400) expect(await snapshot()).toBe(before);
        // A case that signed out or otherwise ended the session must not blunt the cases after it.
        await ensureSession();
      }),
      { seed: fcSeed, numRuns },
    );
    console.log(`hostile input: ${cases} generated requests over ${ops.length} operations (seed ${fcSeed}); statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
    expect(server.logs).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted');
    expect((await fetch(`${server.baseUrl}/api/v3/user`, { headers: { 'private-token': seed.jsmith.pat } })).status).toBe(200);
  }, 60_000);
});

// U+0000 and lone surrogates are valid in a JavaScript string (a percent-escape or a JSON escape makes them) but are
// no text to PostgreSQL, which refuses the first and cannot be sent the second. Each case is answered as its harmless
// look-alike is (an unknown login, client, token or group), on both stores, and a wrong login of this kind counts.
describe('text PostgreSQL cannot hold: U+0000 and lone surrogates', () => {
  const perLogin = 3;
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ throttlePolicy: { perAddress: { failures: 100, windowSeconds: 600 }, perLogin: { failures: perLogin, windowSeconds: 600 }, deviceStartsPerAddress: { requests: 60, windowSeconds: 60 }, knownAddressSeconds: 3600 } });
  });
  afterAll(() => s.close());

  const formOf = (params: Record<string, string>) => ({ 'content-type': 'application/x-www-form-urlencoded', body: new URLSearchParams(params).toString() });
  const jsonOf = (params: Record<string, string>) => ({ 'content-type': 'application/json', body: JSON.stringify(params) });
  const send = async (method: string, path: string, sent: { 'content-type'?: string; body?: string } = {}, headers: Record<string, string> = {}) => {
    const { body, ...contentType } = sent;
    const response = await rawRequest(s.baseUrl, method, path, { ...contentType, ...headers }, body);
    return { status: response.status, body: response.body, challenge: response.headers['www-authenticate'] };
  };
  const client = { client_id: seed.client.id, client_secret: seed.client.secret };
  const pat = { 'private-token': seed.jsmith.pat };

  it('answers each as its look-alike, never 5xx', async () => {
    // [hostile, look-alike]: the same request with the hostile text, and with an ordinary text nothing matches.
    const cases: Array<[string, () => ReturnType<typeof send>, () => ReturnType<typeof send>]> = [];
    const both = (name: string, request: (text: string) => ReturnType<typeof send>, hostile: string, plain: string) => cases.push([name, () => request(hostile), () => request(plain)]);
    for (const [hostile, plain] of [['a\0b', 'a-b'], ['a\ud800b', 'a-b'], ['\udfff', '-']] as const) {
      both('client_id', (t) => send('POST', '/oauth/token', jsonOf({ grant_type: 'client_credentials', client_id: t, client_secret: 'x' })), hostile, plain);
      both('introspected token', (t) => send('POST', '/oauth/introspect', jsonOf({ token: t, ...client })), hostile, plain);
      both('revoked token', (t) => send('POST', '/oauth/revoke', jsonOf({ token: t })), hostile, plain);
      both('refresh token', (t) => send('POST', '/oauth/token', jsonOf({ grant_type: 'refresh_token', refresh_token: t, ...client })), hostile, plain);
      both('device client_id', (t) => send('POST', '/oauth/authorize_device', jsonOf({ client_id: t })), hostile, plain);
    }
    for (const [hostile, plain] of [['a%00b', 'a-b'], ['%00', '-']] as const) {
      both('group path', (t) => send('GET', `/api/v3/groups/${t}/notification_settings`, {}, pat), hostile, plain);
      both('project path', (t) => send('GET', `/api/v3/projects/opensource%2F${t}/notification_settings`, {}, pat), hostile, plain);
      both('access_token query', (t) => send('GET', `/api/v3/user?access_token=${t}`), hostile, plain);
      both('private_token query', (t) => send('GET', `/api/v3/user?private_token=${t}`), hostile, plain);
      both('token info', (t) => send('GET', `/oauth/token/info?access_token=${t}`), hostile, plain);
      both('authorize client_id', (t) => send('GET', `/oauth/authorize?response_type=code&client_id=${t}&redirect_uri=${encodeURIComponent(seed.redirectUri)}`), hostile, plain);
      both('device user_code', (t) => send('GET', `/oauth/device?user_code=${t}`), hostile, plain);
    }
    for (const [name, hostile, plain] of cases) {
      const [answer, alike] = [await hostile(), await plain()];
      expect(answer.status, `${name}: ${answer.body.slice(0, 300)}`).toBeLessThan(500);
      expect({ status: answer.status, challenge: answer.challenge }, name).toEqual({ status: alike.status, challenge: alike.challenge });
    }
    expect(s.logs).toEqual([]);
  });

  it('answers a login with them as any wrong login, on the password grant and the sign-in form, and counts it', async () => {
    const grant = (username: string, as: typeof formOf) => send('POST', '/oauth/token', as({ grant_type: 'password', username, password: seed.jsmith.password }));
    const wrong = await grant('nobody-here', formOf);
    for (const [username, as] of [['jsm\0ith', formOf], ['jsmith\0', jsonOf], ['jsm\ud800ith', jsonOf]] as const) {
      for (let attempt = 0; attempt < perLogin; attempt++) expect(await grant(username, as), `${JSON.stringify(username)}, attempt ${attempt + 1}`).toEqual(wrong);
      expect((await grant(username, as)).status, JSON.stringify(username)).toBe(429);
    }
    const agent = new Agent(s.baseUrl);
    const wrongForm = await signIn(agent, 'nobody-there', 'x');
    const hostileForm = await signIn(agent, 'someone\0', 'x');
    expect(hostileForm.status).toBe(wrongForm.status);
    expect(await hostileForm.text()).toContain('Invalid login or password.');
    for (let attempt = 1; attempt < perLogin; attempt++) await signIn(agent, 'someone\0', 'x');
    expect((await signIn(agent, 'someone\0', 'x')).status).toBe(429);
    expect(s.logs).toEqual([]);
  });

  it('refuses to write them on PostgreSQL as a bad value of the form (the file store keeps them), never 5xx', async () => {
    const agent = new Agent(s.baseUrl);
    expect((await signIn(agent, seed.jsmith.username, seed.jsmith.password)).status).toBe(302);
    const csrf = csrfOf(await (await agent.get('/profile/applications')).text());
    const writes = [
      () => agent.post('/profile/applications', { _csrf: csrf, name: 'app\0', redirect_uri: 'https://app.example/cb' }),
      () => agent.post('/profile/personal_access_tokens', { _csrf: csrf, name: 'token\0', scopes: 'api' }),
    ];
    for (const write of writes) {
      const response = await write();
      const page = await response.text();
      if (s.kind === 'file') expect(response.status, page.slice(0, 300)).toBe(201);
      else {
        expect(response.status, page.slice(0, 300)).toBe(400);
        expect(page).toContain('must not contain U+0000 or half of a surrogate pair');
      }
    }
    expect(s.logs).toEqual([]);
  });
});
