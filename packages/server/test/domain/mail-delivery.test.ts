// The outbox delivered to a real SMTP server process (smtp-server on loopback), on the file store and on PostgreSQL:
// each message once with its headers; kept and retried while the server is down or refuses for now; failed with the
// server's reason when it refuses for good; and on PostgreSQL, two workers (two instances) never send one message
// twice.
import { readFile } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { DeliveryError, logTransport, smtpTransport, startMailDelivery, type DeliveryOutcome, type MailDelivery } from '../../src/domain/mail-delivery.js';
import { recordNotification } from '../../src/domain/notification-mail.js';
import { fileBackend } from '../../src/store/backend.js';
import { openStore } from '../../src/store/file/store.js';
import { loadSeed } from '../../src/domain/seed/load.js';
import type { Storage } from '../../src/domain/storage/index.js';
import { exampleSeedPath } from '../support/server.js';
import { freshMigratedDatabase } from '../../../../test/support/postgres.js';
import { startSmtpServer, type TestSmtpServer } from '../../../../test/support/smtp.js';

let smtp: TestSmtpServer;
beforeAll(async () => {
  smtp = await startSmtpServer();
});
afterAll(() => smtp?.close());

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await smtp.refuse(null).catch(() => undefined);
});

/** One storage per instance: the file store has one, PostgreSQL two (two pools standing for two instances). */
const stores: Record<string, () => Promise<Storage[]>> = {
  'the file store': async () => {
    const { storage } = await fileBackend(await openStore({ file: null }));
    cleanups.push(() => storage.maintenance.close());
    return [storage];
  },
  PostgreSQL: async () => {
    const database = await freshMigratedDatabase(inject('postgresUrl'));
    const { openPostgresBackend } = await import('../../src/store/postgres/backend.js');
    const backends = [await openPostgresBackend({ url: database.url, poolSize: 4, migrate: false }), await openPostgresBackend({ url: database.url, poolSize: 4, migrate: false })];
    cleanups.push(async () => {
      for (const b of backends) await b.storage.maintenance.close();
      await database.drop();
    });
    return backends.map((b) => b.storage);
  },
};

const fast = { pollMs: 50, backoffSeconds: 1, leaseSeconds: 30 };
const host = 'tokenbell.test';
const until = async (what: string, done: () => boolean | Promise<boolean>, timeoutMs = 15_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
};

describe.each(Object.keys(stores))('notification mail on %s', (name) => {
  let nonce = '';
  const open = async () => {
    const storages = await stores[name]!();
    await loadSeed(storages[0]!, JSON.parse(await readFile(exampleSeedPath, 'utf8')));
    const jsmith = (await storages[0]!.users.byUsername('jsmith'))!;
    const awong = (await storages[0]!.users.byUsername('awong'))!;
    const widgets = (await storages[0]!.namespaces.projectByFullPath('acme/widgets'))!;
    /** An issue by jsmith that awong takes part in: awong is mailed, as participating. */
    nonce = Math.random().toString(36).slice(2, 10);
    const event = (title: string) => recordNotification(storages[0]!, { kind: 'new_issue', project_id: widgets.id, author_id: jsmith.id, participants: [awong.id], mentioned: [], title: `${title} [${nonce}]` }, { host });
    return { storages, event, awong };
  };
  const workers: MailDelivery[] = [];
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop();
  });
  const deliverTo = (storage: Storage) => {
    const worker = startMailDelivery(storage.mail, smtpTransport(smtp.url, `tokenbell <notifications@${host}>`), fast);
    workers.push(worker);
    return worker;
  };
  // The SMTP server outlives each test and both stores' runs, so every title is made unique with the run's nonce.
  const receivedFor = (title: string) => smtp.received().filter((m) => m.headers.subject === `acme/widgets | ${title} [${nonce}] (new_issue)`);

  it('sends each recipient one message with the headers people filter on, and records it sent', async () => {
    const { storages, event, awong } = await open();
    const { event: recorded, recipients } = await event('Widgets wobble');
    expect(recipients).toEqual([{ user_id: awong.id, username: 'awong', email: 'awong@example.com', reason: 'participating' }]);
    deliverTo(storages[0]!).kick();
    await until('the message', () => receivedFor('Widgets wobble').length === 1);
    const [message] = receivedFor('Widgets wobble');
    expect(message!.to).toEqual(['awong@example.com']);
    expect(message!.headers).toMatchObject({
      subject: `acme/widgets | Widgets wobble [${nonce}] (new_issue)`,
      'list-id': `acme/widgets <${recorded.project_id}.acme.widgets.${host}>`,
      'x-gitlab-notificationreason': 'participating',
      'x-gitlab-project': 'acme/widgets',
    });
    expect(message!.headers['message-id']).toMatch(new RegExp(`^<${recorded.id}\\.[\\w-]+@${host.replace('.', '\\.')}>$`));
    await until('the outbox to say sent', async () => (await storages[0]!.mail.recent({ limit: 10 }))[0]?.status === 'sent');
    expect((await storages[0]!.mail.recent({ limit: 10 }))[0]).toMatchObject({ status: 'sent', attempts: 1, last_error: null });
  });

  it('keeps messages while the SMTP server is down and delivers each once when it is back', async () => {
    const { storages, event } = await open();
    await smtp.stop();
    for (let i = 0; i < 5; i++) await event(`Outage ${i}`);
    deliverTo(storages[0]!).kick();
    await until('a failed attempt on every message', async () => (await storages[0]!.mail.recent({ limit: 10 })).every((m) => m.attempts >= 1 && m.last_error !== null));
    expect((await storages[0]!.mail.recent({ limit: 10 })).every((m) => m.status === 'queued')).toBe(true);
    await smtp.start();
    await until('every message', () => [0, 1, 2, 3, 4].every((i) => receivedFor(`Outage ${i}`).length >= 1), 20_000);
    await until('the outbox to say sent', async () => (await storages[0]!.mail.recent({ limit: 10 })).every((m) => m.status === 'sent'));
    for (let i = 0; i < 5; i++) expect(receivedFor(`Outage ${i}`)).toHaveLength(1);
  });

  it('retries a temporary refusal, and gives up on a permanent one with the reason recorded', async () => {
    const { storages, event } = await open();
    await smtp.refuse('temporary');
    await event('Try later');
    const worker = deliverTo(storages[0]!);
    worker.kick();
    await until('a refused attempt', async () => (await storages[0]!.mail.recent({ limit: 1 }))[0]?.last_error?.includes('4.3.0') === true);
    await smtp.refuse(null);
    await until('the retried message', () => receivedFor('Try later').length === 1, 20_000);

    await smtp.refuse('permanent');
    await event('Never');
    worker.kick();
    await until('the refusal', async () => (await storages[0]!.mail.recent({ limit: 1 }))[0]?.status === 'failed');
    expect((await storages[0]!.mail.recent({ limit: 1 }))[0]).toMatchObject({ status: 'failed', attempts: 1, last_error: expect.stringMatching(/^refused: .*5\.1\.1/) });
    expect(receivedFor('Never')).toHaveLength(0);
  });

  it('tells its observers what became of each attempt: queued again, then given up after the last', async () => {
    const { storages, event } = await open();
    await event('Observed');
    let clock = Math.floor(Date.now() / 1000);
    const refusing = { send: () => Promise.reject(new DeliveryError('4.3.0 try again later', false)), close: () => undefined };
    const worker = startMailDelivery(storages[0]!.mail, refusing, { ...fast, maxAttempts: 2, now: () => clock });
    workers.push(worker);
    const outcomes: DeliveryOutcome[] = [];
    worker.observeAttempts((outcome) => outcomes.push(outcome));
    worker.kick();
    await until('a retry', () => outcomes.length === 1);
    // Due again by the worker's clock.
    clock += 60;
    worker.kick();
    await until('the last attempt', () => outcomes.length === 2);
    expect(outcomes).toEqual(['retry', 'failed']);
    expect((await storages[0]!.mail.recent({ limit: 1 }))[0]).toMatchObject({ status: 'failed', attempts: 2, last_error: expect.stringMatching(/^gave up after 2 attempts/) });
  });

  it('claims each message once, whichever instance asks', async () => {
    const { storages, event } = await open();
    for (let i = 0; i < 30; i++) await event(`Burst ${i}`);
    // Two workers per instance, all polling at once.
    for (const storage of storages) for (let w = 0; w < 2; w++) deliverTo(storage).kick();
    await until('every message', () => Array.from({ length: 30 }, (_, i) => i).every((i) => receivedFor(`Burst ${i}`).length >= 1), 20_000);
    await until('the outbox to say sent', async () => (await storages[0]!.mail.recent({ limit: 40 })).every((m) => m.status === 'sent'));
    for (let i = 0; i < 30; i++) expect(receivedFor(`Burst ${i}`), `Burst ${i}`).toHaveLength(1);
  });
});

describe('without an SMTP server', () => {
  it('logs each message, naming recipient, subject and reason', async () => {
    const { storage } = await fileBackend(await openStore({ file: null }));
    await loadSeed(storage, JSON.parse(await readFile(exampleSeedPath, 'utf8')));
    const jsmith = (await storage.users.byUsername('jsmith'))!;
    const awong = (await storage.users.byUsername('awong'))!;
    const widgets = (await storage.namespaces.projectByFullPath('acme/widgets'))!;
    await recordNotification(storage, { kind: 'new_issue', project_id: widgets.id, author_id: jsmith.id, participants: [awong.id], mentioned: [], title: 'Logged' }, { host });
    const lines: string[] = [];
    const worker = startMailDelivery(storage.mail, logTransport((line) => lines.push(line)), fast);
    worker.kick();
    await until('the log line', () => lines.length === 1);
    await worker.stop();
    expect(lines).toEqual(['mail to=awong@example.com subject="acme/widgets | Logged (new_issue)" reason=participating']);
    expect((await storage.mail.recent({ limit: 1 }))[0]?.status).toBe('sent');
    await storage.maintenance.close();
  });
});
