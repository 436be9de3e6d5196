// The mail port (domain/storage/mail.ts) on every backend (backends.ts): notification events and their messages,
// marked sent or failed, listed, summarised, and pruned once past the retention.
import { describe, expect, it } from 'vitest';
import { day, everyBackend, newProject, newUser, now, useBackends } from './backends.js';

const { open } = useBackends();

describe.each(everyBackend)('mail on %s', (name) => {
  it('summarises the outbox: messages by status, and when the oldest still queued was queued', async () => {
    const { storages: [storage] } = await open(name);
    expect(await storage.mail.summary()).toEqual({ queued: 0, sent: 0, failed: 0, oldestQueuedAt: null });
    const user = await storage.users.create(newUser('jsmith'));
    const project = await storage.namespaces.createProject(newProject('jsmith', 'notes'), []);
    const message = (id: string, createdAt: number) => ({ id, event_id: 'e', user_id: user.id, to: 'jsmith@example.com', subject: id, text: 'text', headers: {}, next_attempt_at: createdAt, created_at: createdAt });
    await storage.mail.recordEvent({ id: 'e', kind: 'new_issue', project_id: project.id, author_id: user.id, title: 'e', created_at: now - day }, [
      message('sent-oldest', now - day),
      message('failed', now - day + 1),
      message('queued-newer', now - 60),
      message('queued-older', now - 3600),
      message('queued-claimed', now - 1800),
    ]);
    await storage.mail.markSent('sent-oldest', now);
    await storage.mail.markFailed('failed', 'refused: 550');
    // Claimed by a worker, it is still queued until marked.
    await storage.mail.claimDue(now, 1, 60);
    expect(await storage.mail.summary()).toEqual({ queued: 3, sent: 1, failed: 1, oldestQueuedAt: now - 3600 });
  });

  it('prunes notification mail sent or failed before the retention, keeps what is queued and what is recent, and events while a message of theirs stays', async () => {
    const { storages: [storage] } = await open(name);
    const user = await storage.users.create(newUser('jsmith'));
    const project = await storage.namespaces.createProject(newProject('jsmith', 'notes'), []);
    const message = (id: string, eventId: string, createdAt: number) => ({
      id,
      event_id: eventId,
      user_id: user.id,
      to: 'jsmith@example.com',
      subject: `subject ${id}`,
      text: 'text',
      headers: { 'X-GitLab-NotificationReason': 'participating' },
      next_attempt_at: createdAt,
      created_at: createdAt,
    });
    const event = (id: string, createdAt: number) => ({ id, kind: 'new_issue' as const, project_id: project.id, author_id: user.id, title: id, created_at: createdAt });
    const old = now - 8 * day;
    await storage.mail.recordEvent(event('old-done', old), [message('sent-old', 'old-done', old), message('failed-old', 'old-done', old)]);
    await storage.mail.recordEvent(event('old-mixed', old), [message('sent-old-2', 'old-mixed', old), message('queued-old', 'old-mixed', old)]);
    await storage.mail.recordEvent(event('recent', now - day), [message('sent-recent', 'recent', now - day)]);
    for (const id of ['sent-old', 'sent-old-2', 'sent-recent']) await storage.mail.markSent(id, now - day);
    await storage.mail.markFailed('failed-old', 'refused: 550');

    expect(await storage.maintenance.prune(now)).toEqual({ authorizationCodes: 0, deviceGrants: 0, accessTokens: 0, sessions: 0, notificationMessages: 3 });
    expect((await storage.mail.recent({ limit: 10 })).map((m) => m.id).sort()).toEqual(['queued-old', 'sent-recent']);
    // The event whose messages are all gone goes too; the one with a message still queued stays.
    expect(await storage.mail.recent({ limit: 10, eventId: 'old-done' })).toEqual([]);
    expect((await storage.mail.recent({ limit: 10, eventId: 'old-mixed' })).map((m) => m.id)).toEqual(['queued-old']);
    expect(await storage.maintenance.prune(now)).toMatchObject({ notificationMessages: 0 });
  });
});
