// 1,000 PUTs from 100 users at once over real HTTP, on a real data file: every user ends with exactly their last
// acknowledged write, and the file on disk equals the state in memory.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notificationEvents } from '../../src/openapi/document.js';
import { readDurableData } from '../../src/store/file-store.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { tempDir } from './support.js';

const users = 100;
const writesPerUser = 10;
const tokenOf = (i: number) => `tbpat-load-user-${String(i).padStart(3, '0')}-000000000000000000`;

let dir: Awaited<ReturnType<typeof tempDir>>;
let server: TestServer;
let store: TestServer['store'];
let baseUrl: string;

beforeAll(async () => {
  dir = await tempDir();
  server = await startTestServer({
    file: join(dir.path, 'data.json'),
    // One seed load for all users: their passwords are hashed once, concurrently, and never used again.
    seed: {
      users: Array.from({ length: users }, (_, i) => ({
        username: `load${i}`,
        email: `load${i}@example.com`,
        name: `Load ${i}`,
        password: `password-of-load-${i}`,
        personal_access_tokens: [{ name: 'load', token: tokenOf(i), scopes: ['api'] }],
      })),
    },
    validateResponses: false,
  });
  ({ store, baseUrl } = server);
});
afterAll(async () => {
  await server?.close();
  await dir.remove();
});

/** The j-th write of user i: every field differs from the user's other writes and from other users' writes. */
function update(i: number, j: number) {
  const levels = ['watch', 'participating', 'mention', 'disabled', 'custom'] as const;
  const events = Object.fromEntries(notificationEvents.map((event, bit) => [event, (((i * writesPerUser + j) >> bit) & 1) === 1]));
  return { level: levels[(i + j) % levels.length]!, notification_email: `load${i}.write${j}@example.com`, ...events };
}

describe('1,000 concurrent PUTs from 100 users', () => {
  it("leaves each user's last acknowledged write, and the same state on disk as in memory", async () => {
    const writesBefore = store.stats.fileWrites;
    const started = Date.now();
    // "Last" is well defined: each user sends its writes one after another (the next only once the previous is
    // acknowledged), while all users run at the same time, so the requests of different users interleave freely.
    const last = await Promise.all(
      Array.from({ length: users }, async (_, i) => {
        let answer: unknown;
        for (let j = 0; j < writesPerUser; j++) {
          const body = update(i, j);
          // Alternate JSON and form bodies: both parsers share the same commits.
          const response = await fetch(`${baseUrl}/api/v3/notification_settings`, {
            method: 'PUT',
            headers: j % 2 === 0 ? { 'private-token': tokenOf(i), 'content-type': 'application/json' } : { 'private-token': tokenOf(i), 'content-type': 'application/x-www-form-urlencoded' },
            body: j % 2 === 0 ? JSON.stringify(body) : new URLSearchParams(Object.entries(body).map(([k, v]) => [k, String(v)])).toString(),
          });
          expect(response.status).toBe(200);
          answer = await response.json();
        }
        return answer;
      }),
    );
    const elapsed = Date.now() - started;
    // Read at once: every commit was acknowledged only after a write containing it, so the data file and its
    // journal already hold everything.
    const onDisk: unknown = await readDurableData(store.file!);
    expect(onDisk).toEqual(JSON.parse(JSON.stringify(store.data)));

    for (let i = 0; i < users; i++) {
      const { level, notification_email, ...events } = update(i, writesPerUser - 1);
      const expected = level === 'custom' ? { level, notification_email, events } : { level, notification_email };
      expect(last[i]).toEqual(expected);
      const user = store.lookup('users', 'username', `load${i}`)!;
      const record = store.data.notificationSettings.find((s) => s.user_id === user.id && s.source_type === 'global');
      expect(record).toMatchObject({ level, notification_email, events });
      const read = await fetch(`${baseUrl}/api/v3/notification_settings`, { headers: { 'private-token': tokenOf(i) } });
      expect(await read.json()).toEqual(expected);
    }
    expect(store.data.notificationSettings.filter((s) => s.source_type === 'global')).toHaveLength(users);

    const fileWrites = store.stats.fileWrites - writesBefore;
    console.log(`concurrency: ${users * writesPerUser} PUTs from ${users} users in ${elapsed} ms, ${fileWrites} file writes`);
    expect(fileWrites).toBeLessThan(users * writesPerUser);
  });
});

describe('25 concurrent PUTs of one user on one project', () => {
  it('answers each with the settings as that PUT left them, and keeps one of them', async () => {
    const token = tokenOf(0);
    const owner = store.lookup('users', 'username', 'load0')!;
    const project = await store.commit(() =>
      store.insert('projects', {
        id: store.nextId('projects'),
        namespace: 'load0',
        path: 'echo',
        name: 'echo',
        visibility: 'private',
        group_id: null,
        members: [{ user_id: owner.id, access_level: 50 }],
        created_at: new Date().toISOString(),
      }),
    );
    // Request k turns on exactly the events of the bits of k + 1: 25 different custom settings.
    const eventsOf = (k: number) => Object.fromEntries(notificationEvents.map((event, bit) => [event, (((k + 1) >> bit) & 1) === 1]));
    const answers = await Promise.all(
      Array.from({ length: 25 }, async (_, k) => {
        const response = await fetch(`${baseUrl}/api/v3/projects/${project.id}/notification_settings`, {
          method: 'PUT',
          headers: { 'private-token': token, 'content-type': 'application/json' },
          body: JSON.stringify({ level: 'custom', ...eventsOf(k) }),
        });
        expect(response.status).toBe(200);
        return response.json();
      }),
    );
    answers.forEach((answer, k) => expect(answer).toEqual({ level: 'custom', events: eventsOf(k) }));
    const final = await (await fetch(`${baseUrl}/api/v3/projects/${project.id}/notification_settings`, { headers: { 'private-token': token } })).json();
    expect(answers).toContainEqual(final);
  });
});
