import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConsoleMailer, FileMailer, notify, type MailMessage, type Mailer } from '../../src/domain/mailer.js';
import { StoreBuilder } from './fixtures.js';

class MemoryMailer implements Mailer {
  readonly sent: MailMessage[] = [];
  async send(message: MailMessage): Promise<void> {
    this.sent.push(message);
  }
}

function collect(stream: PassThrough): () => string {
  let out = '';
  stream.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  return () => out;
}

describe('ConsoleMailer', () => {
  it('writes one line per mail, even for a multi-line text', async () => {
    const stream = new PassThrough();
    const output = collect(stream);
    const mailer = new ConsoleMailer(stream);
    await mailer.send({ to: 'a@example.com', subject: 'one', text: 'line 1\nline 2\n' });
    await mailer.send({ to: 'b@example.com', subject: 'two', text: 'x' });
    const lines = output().split('\n').filter(Boolean);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain('a@example.com');
    expect(lines[0]).toContain('"one"');
    expect(lines[0]).toContain(JSON.stringify('line 1\nline 2\n'));
    expect(lines[1]).toContain('b@example.com');
  });
});

describe('FileMailer', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tokenbell-mail-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('appends JSON lines in the order of the calls, to an existing file too', async () => {
    const path = join(dir, 'mail.jsonl');
    const first = new FileMailer(path);
    await first.send({ to: 'a@example.com', subject: 's1', text: 't1' });
    const second = new FileMailer(path);
    const messages = Array.from({ length: 20 }, (_, i) => ({ to: `u${i}@example.com`, subject: `s${i}`, text: `t\n${i}` }));
    await Promise.all(messages.map((m) => second.send(m)));
    const lines = (await readFile(path, 'utf8')).trimEnd().split('\n').map((l) => JSON.parse(l) as MailMessage);
    expect(lines).toEqual([{ to: 'a@example.com', subject: 's1', text: 't1' }, ...messages]);
  });

  it('reports a failed append and keeps working afterwards', async () => {
    const mailer = new FileMailer(join(dir, 'missing-dir', 'mail.jsonl'));
    await expect(mailer.send({ to: 'a@example.com', subject: 's', text: 't' })).rejects.toThrow();
    const ok = new FileMailer(join(dir, 'mail.jsonl'));
    await ok.send({ to: 'b@example.com', subject: 's', text: 't' });
    expect(await readFile(join(dir, 'mail.jsonl'), 'utf8')).toContain('b@example.com');
  });
});

describe('notify', () => {
  it('sends one mail per recipient, naming the event and project, and returns the recipients', async () => {
    const b = new StoreBuilder();
    const group = b.group('acme', 'private');
    const project = b.project('widgets', 'private', group);
    const author = b.user('author');
    const watcher = b.user('watcher');
    const participant = b.user('participant');
    b.member(group, author).member(group, watcher).member(project, participant);
    b.groupSetting(watcher, group, 'watch').globalSetting(participant, 'participating', { notification_email: 'p@alerts.example' });
    const mailer = new MemoryMailer();

    const recipients = await notify(b.storage().recipients, mailer, {
      kind: 'new_issue',
      project_id: project.id,
      author_id: author.id,
      participants: [author.id, participant.id],
      mentioned: [],
    });

    expect(recipients.map((r) => r.user_id)).toEqual([watcher.id, participant.id]);
    expect(mailer.sent.map((m) => m.to)).toEqual(['watcher@example.com', 'p@alerts.example']);
    for (const m of mailer.sent) {
      expect(m.subject).toContain('new_issue');
      expect(m.subject).toContain('acme/widgets');
    }
    expect(mailer.sent[0]!.text).toContain('watching');
  });

  it('sends nothing when nobody is to be notified', async () => {
    const b = new StoreBuilder();
    const project = b.project('widgets', 'public', null, 'author');
    const author = b.user('author');
    const mailer = new MemoryMailer();
    const got = await notify(b.storage().recipients, mailer, { kind: 'close_issue', project_id: project.id, author_id: author.id, participants: [author.id], mentioned: [] });
    expect(got).toEqual([]);
    expect(mailer.sent).toEqual([]);
  });
});
