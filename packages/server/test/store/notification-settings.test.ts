// Notification settings storage on each store (the file store, PostgreSQL from two pools): a change applies to the
// stored version and answers what it wrote, so concurrent changes of one setting keep each other's fields and the
// final state is one of the writes acknowledged.
import { describe, expect, it } from 'vitest';
import { noEvents } from '../../src/domain/notification-levels.js';
import type { NotificationSettingsStorage } from '../../src/domain/storage/index.js';
import type { NotificationSettingRecord } from '../../src/domain/storage/records.js';
import { inMemory, newUser, onPostgres, statementsOn, useBackends } from './backends.js';

const { open, postgres } = useBackends();

/** One handle per instance (the file store has one, PostgreSQL two pools), with user 1, whose settings these are. */
async function settingsOn(name: string): Promise<NotificationSettingsStorage[]> {
  const { storages } = await open(name);
  await storages[0].users.create(newUser('jsmith'));
  return storages.map((storage) => storage.notificationSettings);
}

const global = { user_id: 1, source_type: 'global', source_id: null } as const;
const project = { user_id: 1, source_type: 'project', source_id: 7 } as const;
const fresh = (key: typeof global | typeof project): NotificationSettingRecord => ({ ...key, level: key.source_type === 'global' ? 'participating' : 'global', notification_email: null, events: noEvents() });

describe.each([inMemory, onPostgres])('notification settings on %s', (name) => {
  const storages = () => settingsOn(name);

  it('finds nothing before the first change, then the version written, per source', async () => {
    const [settings] = (await storages()) as [NotificationSettingsStorage];
    expect(await settings.find(global)).toBeUndefined();
    const written = await settings.change(fresh(project), { level: 'watch', events: { new_note: true } });
    expect(written).toEqual({ ...fresh(project), level: 'watch', events: { ...noEvents(), new_note: true } });
    expect(await settings.find(project)).toEqual(written);
    expect(await settings.find(global)).toBeUndefined();
    expect(await settings.find({ ...project, source_id: 8 })).toBeUndefined();
  });

  it('applies forty concurrent changes of one setting to the stored version each time, losing none', async () => {
    const handles = await storages();
    const events = Object.keys(noEvents()) as (keyof ReturnType<typeof noEvents>)[];
    // Each change switches on one event; each must see the ones before it, whatever the order.
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        handles[i % handles.length]!.change(fresh(global), { level: i % 2 === 0 ? 'watch' : 'custom', events: { [events[i % events.length]!]: true } }),
      ),
    );
    const final = await handles[0]!.find(global);
    expect(Object.values(final!.events).every(Boolean)).toBe(true);
    // The stored state is one of the acknowledged answers (the last write), not a mixture.
    expect(answers).toContainEqual(final);
  });

  it('changes only what the patch names: the e-mail address when sent (null clears it), the level when sent', async () => {
    const [settings] = (await storages()) as [NotificationSettingsStorage];
    await settings.change(fresh(global), { level: 'custom', notification_email: 'me@example.com', events: { new_note: true, failed_pipeline: true } });
    const kept = await settings.change(fresh(global), { events: { new_note: false } });
    expect(kept).toEqual({ ...fresh(global), level: 'custom', notification_email: 'me@example.com', events: { ...noEvents(), failed_pipeline: true } });
    const cleared = await settings.change(fresh(global), { level: 'watch', notification_email: null, events: {} });
    expect(cleared).toEqual({ ...kept, level: 'watch', notification_email: null });
    expect(await settings.find(global)).toEqual(cleared);
  });
});

// PostgreSQL sends the changes that arrive in one turn as one statement (store/postgres/batch.ts): what each caller
// gets must not change, and one refused change must not take the others down with it.
describe('notification settings on PostgreSQL, changed together', () => {
  async function database(users: number) {
    const { pools, storages } = await postgres(1);
    const pool = pools[0]!;
    await pool.query(`INSERT INTO users (id, username, email, name, password_hash) SELECT i, 'user' || i, 'user' || i || '@example.com', 'U', 'x' FROM generate_series(1, $1::int) AS i`, [users]);
    return { settings: storages[0]!.notificationSettings, statements: statementsOn(pool) };
  }
  const forUser = (user_id: number) => ({ ...fresh(project), user_id });

  it('answers thirty changes of thirty users from one statement, each with its own row', async () => {
    const { settings, statements } = await database(30);
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => settings.change(forUser(i + 1), { level: i % 2 ? 'watch' : 'disabled', events: { new_note: i % 3 === 0 } })));
    expect(statements).toHaveLength(1);
    answers.forEach((answer, i) => expect(answer).toEqual({ ...forUser(i + 1), level: i % 2 ? 'watch' : 'disabled', events: { ...noEvents(), new_note: i % 3 === 0 } }));
    for (const [i, answer] of answers.entries()) expect(await settings.find(forUser(i + 1))).toEqual(answer);
  });

  it('applies two changes of one setting from one turn in order, in two statements', async () => {
    const { settings, statements } = await database(1);
    const [first, second] = await Promise.all([settings.change(forUser(1), { level: 'custom', events: { new_note: true } }), settings.change(forUser(1), { events: { failed_pipeline: true } })]);
    expect(statements).toHaveLength(2);
    expect(first).toEqual({ ...forUser(1), level: 'custom', events: { ...noEvents(), new_note: true } });
    expect(second).toEqual({ ...first, events: { ...first!.events, failed_pipeline: true } });
    expect(await settings.find(forUser(1))).toEqual(second);
  });

  it('fails only the change that is refused (a user who no longer exists), and stores the others', async () => {
    const { settings } = await database(3);
    const results = await Promise.allSettled([1, 99, 2, 3].map((user) => settings.change(forUser(user), { level: 'watch', events: {} })));
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: '23503' });
    for (const user of [1, 2, 3]) expect(await settings.find(forUser(user))).toMatchObject({ level: 'watch' });
    expect(await settings.find(forUser(99))).toBeUndefined();
  });
});
