// Recording an event's mail: one queued message per recipient, in the same write as the event, or nothing at all.
import { describe, expect, it } from 'vitest';
import { recordNotification } from '../../src/domain/notification-mail.js';
import { StoreBuilder } from './fixtures.js';

describe('recordNotification', () => {
  it('queues one message per recipient with its reason, and the event with them', async () => {
    const b = new StoreBuilder();
    const group = b.group('acme');
    const project = b.project('widgets', 'private', group);
    const author = b.user('author');
    const watcher = b.user('watcher');
    const participant = b.user('participant');
    b.member(group, author).member(group, watcher).member(project, participant);
    b.groupSetting(watcher, group, 'watch').globalSetting(participant, 'participating', { notification_email: 'p@alerts.example' });
    const storage = b.storage();
    const { event, recipients } = await recordNotification(storage, { kind: 'new_issue', project_id: project.id, author_id: author.id, participants: [author.id, participant.id], mentioned: [], title: 'It broke' }, { host: 'tb.test', now: 1_795_608_000 });
    expect(recipients).toEqual([
      { user_id: watcher.id, username: watcher.username, email: 'watcher@example.com', reason: 'watching' },
      { user_id: participant.id, username: participant.username, email: 'p@alerts.example', reason: 'participating' },
    ]);
    const queued = await storage.mail.recent({ limit: 10 });
    expect(queued.map((m) => [m.to, m.headers['X-GitLab-NotificationReason'], m.status, m.next_attempt_at, m.event_id]).sort()).toEqual([
      ['p@alerts.example', 'participating', 'queued', 1_795_608_000, event.id],
      ['watcher@example.com', 'watching', 'queued', 1_795_608_000, event.id],
    ]);
    expect(queued[0]).toMatchObject({ subject: 'acme/widgets | It broke (new_issue)', attempts: 0, claimed_until: null });
    expect(queued[0]!.text).toMatch(/^new issue in acme\/widgets: It broke\n\nYou are receiving this because /);
  });

  it('records nothing for an unknown project', async () => {
    const b = new StoreBuilder();
    const author = b.user('author');
    const storage = b.storage();
    await expect(recordNotification(storage, { kind: 'new_issue', project_id: 99, author_id: author.id, participants: [], mentioned: [], title: 'x' }, { host: 'tb.test' })).rejects.toThrow(RangeError);
    expect(await storage.mail.recent({ limit: 10 })).toEqual([]);
  });
});
