// Starts and closes startTokenbell instances in a row, each answering a request, and prints (as JSON) what the
// process holds after the first cycles and after all: its active handles and timers, and the heap after a full GC.
// Run by testing-leaks.test.ts in a child process of its own (`node --expose-gc --import tsx`), so that nothing else
// in the process counts. The request goes out without a keep-alive agent: fetch's pool per origin would itself grow
// with every new port and be counted against the server.
import { get } from 'node:http';
import { startTokenbell } from '../../src/testing.js';

const [warmUp, total] = process.argv.slice(2).map(Number) as [number, number];
const seed = {
  users: [{ username: 'alice', email: 'alice@example.com', name: 'Alice', password: 'alice-password' }],
  applications: [{ name: 'App', owner: 'alice', client_id: 'app', client_secret: 'app-secret-0123456789abcdef', redirect_uris: ['http://127.0.0.1:9/cb'] }],
};

const request = (url: string, token: string) =>
  new Promise<number>((resolve, reject) => {
    get(url, { agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    }).on('error', reject);
  });

async function cycle(): Promise<void> {
  const tokenbell = await startTokenbell({ seed });
  const { access_token } = await tokenbell.helpers.mintAccessToken({ username: 'alice', client_id: 'app' });
  if ((await request(`${tokenbell.url}/api/v4/user`, access_token)) !== 200) throw new Error('the instance did not answer');
  await tokenbell.helpers.reset();
  await tokenbell.close();
}

/**
 * Requests in flight (a file read, a lookup: FSReqCallback, GetAddrInfoReqWrap) end by themselves and are not held:
 * one can be under way at any moment (on Node 22, one was, right after the imports), so a reading waits for them to
 * finish, for a while, rather than count them. What stays after that is held.
 */
const inFlight = (kind: string) => /Req/.test(kind);

async function held(): Promise<{ resources: string[]; heapBytes: number }> {
  const gc = (globalThis as { gc?: () => void }).gc!;
  gc();
  await new Promise((resolve) => setTimeout(resolve, 50));
  for (let waited = 0; waited < 2_000 && process.getActiveResourcesInfo().some(inFlight); waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
  gc();
  return { resources: process.getActiveResourcesInfo().filter((kind) => kind !== 'Timeout'), heapBytes: process.memoryUsage().heapUsed };
}

const before = await held();
for (let i = 0; i < warmUp; i++) await cycle();
const warm = await held();
for (let i = warmUp; i < total; i++) await cycle();
const after = await held();
process.stdout.write(JSON.stringify({ before, warm, after }));
