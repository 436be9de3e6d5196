// 1,000 PUTs from 100 users at once over real HTTP, on a real data file (or a PostgreSQL database, in the `postgres`
// test project): every user ends with exactly their last acknowledged write, and the file on disk equals the state in
// memory.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notificationEvents } from '../../src/openapi/document.js';
import { readDurableData } from '../../src/store/file/store.js';
import { startTestServer, testStoreKind, type TestServer } from '../support/server.js';
import { tempDir } from './support.js';

const users = 100;
const writesPerUser = 10;
const tokenOf = (i: number) => `tbpat-load-user-${String(i).padStart(3, '0')}-000000000000000000`;
const emailOf = (i: number, j: number) => `load${i}.write${j}@example.com`;

let dir: Awaited<ReturnType<typeof tempDir>>;
let server: TestServer;
let baseUrl: string;

beforeAll(async () => {
  dir = await tempDir();
  server = await startTestServer({
    ...(testStoreKind() === 'file' ? { file: join(dir.path, 'data.json') } : {}),
    // One seed load for all users: their passwords are hashed once, concurrently, and never used again.
    seed: {
      users: Array.from({ length: users }, (_, i) => ({
        username: `load${i}`,
        email: `load${i}@example.com`,
        name: `Load ${i}`,
        password: `password-of-load-${i}`,
        // The addresses its writes name (update below): a notification e-mail must be one of the user's own.
        secondary_emails: Array.from({ length: writesPerUser }, (_, j) => emailOf(i, j)),
        personal_access_tokens: [{ name: 'load', token: tokenOf(i), scopes: ['api'] }],
      })),
    },
    validateResponses: false,
  });
  ({ baseUrl } = server);
});
afterAll(async () => {
  await server?.close();
  await dir.remove();
});

/** The j-th write of user i: every field differs from the user's other writes and from other users' writes. */
function update(i: number, j: number) {
  const levels = ['watch', 'participating', 'mention', 'disabled', 'custom'] as const;
  const events = Object.fromEntries(notificationEvents.map((event, bit) => [event, (((i * writesPerUser + j) >> bit) & 1) === 1]));
  return { level: levels[(i + j) % levels.length]!, notification_email: emailOf(i, j), ...events };
}

describe('1,000 concurrent PUTs from 100 users', () => {
  it("leaves each user's last acknowledged write, and the same state on disk as in memory", async () => {
    const fileWrites = () => (server.kind === 'file' ? server.store.stats.fileWrites : 0);
    const writesBefore = fileWrites();
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
    if (server.kind === 'file') {
      // Read at once: every commit was acknowledged only after a write containing it, so the data file and its
      // journal already hold everything.
      const onDisk: unknown = await readDurableData(server.store.file!);
      expect(onDisk).toEqual(JSON.parse(JSON.stringify(server.store.data)));
    }

    for (let i = 0; i < users; i++) {
      const { level, notification_email, ...events } = update(i, writesPerUser - 1);
      const expected = level === 'custom' ? { level, notification_email, events } : { level, notification_email };
      expect(last[i]).toEqual(expected);
      const user = (await server.storage.users.byUsername(`load${i}`))!;
      const record = await server.storage.notificationSettings.find({ user_id: user.id, source_type: 'global', source_id: null });
      expect(record).toMatchObject({ level, notification_email, events });
      const read = await fetch(`${baseUrl}/api/v3/notification_settings`, { headers: { 'private-token': tokenOf(i) } });
      expect(await read.json()).toEqual(expected);
    }
    const globalSettings =
      server.kind === 'file'
        ? server.store.data.notification_settings.filter((s) => s.source_type === 'global').length
        : Number((await server.sql<{ count: string }>(`SELECT count(*) AS count FROM notification_settings WHERE source_type = 'global'`))[0]!.count);
    expect(globalSettings).toBe(users);

    const writes = fileWrites() - writesBefore;
    console.log(`concurrency: ${users * writesPerUser} PUTs from ${users} users in ${elapsed} ms on the ${server.kind} store${server.kind === 'file' ? `, ${writes} file writes` : ''}`);
    // The file store groups concurrent commits into fewer writes of the file.
    if (server.kind === 'file') expect(writes).toBeLessThan(users * writesPerUser);
  });
});

describe('25 concurrent PUTs of one user on one project', () => {
  it('answers each with the settings as that PUT left them, and keeps one of them', async () => {
    const token = tokenOf(0);
    const owner = (await server.storage.users.byUsername('load0'))!;
    const project = await server.storage.namespaces.createProject(
      { namespace: 'load0', path: 'echo', name: 'echo', visibility: 'private', created_at: Math.floor(Date.now() / 1000) },
      [{ user_id: owner.id, access_level: 50 }],
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
