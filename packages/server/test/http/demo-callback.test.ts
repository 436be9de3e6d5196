// The demo application ends its first authorization on the server's own callback page, which shows the code and
// the exact request that exchanges it; that request works.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ensureDemoData } from '../../src/domain/seed/demo.js';
import { Agent, consentFields, signIn } from '../support/agent.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ seed: {} });
});
afterAll(() => server.close());

const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

it('takes the demo application from consent to a code on its callback page, and the shown request gets tokens', async () => {
  // The test server's base URL is its own address, as the CLI's is.
  const demo = (await ensureDemoData(server.storage, server.baseUrl))!;
  const agent = new Agent(server.baseUrl);
  expect((await signIn(agent, demo.username, demo.password)).status).toBe(302);
  const query = new URLSearchParams({ client_id: demo.client_id, redirect_uri: demo.redirect_uri, response_type: 'code', state: 'first-try' });
  const consent = await (await agent.get(`/oauth/authorize?${query.toString().replace(/\+/g, '%20')}`)).text();
  const approved = await agent.post('/oauth/authorize', { ...consentFields(consent), decision: 'approve' });
  const location = new URL(approved.headers.get('location')!);
  expect(`${location.origin}${location.pathname}`).toBe(`${server.baseUrl}/demo/callback`);

  const page = await agent.get(`/demo/callback${location.search}`);
  expect(page.status).toBe(200);
  expect(page.headers.get('cache-control')).toBe('no-store');
  const text = await page.text();
  const code = /id="code" type="text" readonly value="([^"]+)"/.exec(text)![1]!;
  expect(code).toBe(location.searchParams.get('code'));
  expect(text).toContain('value="first-try"');
  const command = unescape(/<pre><code>([^<]+)<\/code><\/pre>/.exec(text)![1]!);
  expect(command).toBe(`curl -X POST ${server.baseUrl}/oauth/token -u 'CLIENT_ID:CLIENT_SECRET' -d grant_type=authorization_code -d code=${code} --data-urlencode redirect_uri=${server.baseUrl}/demo/callback`);

  // The request the page shows, with the demo credentials in place of the placeholders.
  const token = await fetch(`${server.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${btoa(`${demo.client_id}:${demo.client_secret}`)}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: demo.redirect_uri }),
  });
  expect(token.status).toBe(200);
});

it('shows an error the authorization endpoint sent, escaped', async () => {
  const text = await (await fetch(`${server.baseUrl}/demo/callback?error=access_denied&error_description=%3Cb%3Eno%3C%2Fb%3E&state=s`)).text();
  expect(text).toContain('<h1>Authorization not granted</h1>');
  expect(text).toContain('<code>access_denied</code>: &lt;b&gt;no&lt;/b&gt;');
});
