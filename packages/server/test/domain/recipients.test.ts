import { describe, expect, it } from 'vitest';
import type { NotificationEvent } from '../../src/domain/storage/records.js';
import { notificationEvents } from '../../src/openapi/document.js';
import { recipientsFor, type NotifiableEvent, type Recipient } from '../../src/domain/recipients.js';
import { events, eventsExcept, storageOf, StoreBuilder } from './fixtures.js';

type Level = 'disabled' | 'participating' | 'watch' | 'mention' | 'custom+' | 'custom-' | 'global>watch' | 'group>watch' | 'default';
type Relationship = 'participant' | 'mentioned' | 'member' | 'watcher/private' | 'watcher/public' | 'author' | 'blocked';

const kinds = ['new_issue', 'new_note', 'merge_merge_request', 'failed_pipeline', 'success_pipeline'] as const satisfies readonly NotificationEvent[];

// One row per (relationship, level); one column per event kind. P participating, M mentioned, W watching, C custom,
// - not mailed.
//   custom+ : custom with this event's flag on (every other flag off)
//   custom- : custom with this event's flag off (every other flag on)
//   global>watch : project setting `global`, no group setting, global `watch`
//   group>watch  : no project setting, group `watch`
//   default      : nothing stored at all (global default `participating`)
// Relationships, all in a private project of a private group unless said otherwise:
//   participant     : project member taking part (for pipelines: the pipeline's user), not the author
//   mentioned       : project member mentioned in the text, not a participant
//   member          : member through the group only, neither participant nor mentioned
//   watcher/private : not a member, has a setting stored on the private project (or group)
//   watcher/public  : the same on a public project
//   author          : project member who did it (and participates; for pipelines, the pipeline's user)
//   blocked         : blocked project member, participant and mentioned
// Mentions count as mentions for new_issue and new_note, but for merge_merge_request they count as participation
// (GitLab adds :mention recipients only for new issues/MRs, new notes and re-assignments).
// Pipeline mail goes only to the pipeline's user: failed on participating/watch or custom+flag, success only on
// custom+flag, and the author is not skipped (GitLab's #pipeline_finished has no acting user).
const expectations = `
relationship     level          new_issue new_note merge_mr failed_pl success_pl
participant      disabled       -         -        -        -         -
participant      participating  P         P        P        P         -
participant      watch          P         P        P        P         -
participant      mention        -         -        -        -         -
participant      custom+        P         P        P        C         C
participant      custom-        P         P        P        -         -
participant      global>watch   P         P        P        P         -
participant      group>watch    P         P        P        P         -
participant      default        P         P        P        P         -

mentioned        disabled       -         -        -        -         -
mentioned        participating  M         M        P        -         -
mentioned        watch          M         M        P        -         -
mentioned        mention        M         M        -        -         -
mentioned        custom+        M         M        P        -         -
mentioned        custom-        M         M        P        -         -
mentioned        global>watch   M         M        P        -         -
mentioned        group>watch    M         M        P        -         -
mentioned        default        M         M        P        -         -

member           disabled       -         -        -        -         -
member           participating  -         -        -        -         -
member           watch          W         W        W        -         -
member           mention        -         -        -        -         -
member           custom+        C         C        C        -         -
member           custom-        -         -        -        -         -
member           global>watch   W         W        W        -         -
member           group>watch    W         W        W        -         -
member           default        -         -        -        -         -

watcher/private  disabled       -         -        -        -         -
watcher/private  participating  -         -        -        -         -
watcher/private  watch          -         -        -        -         -
watcher/private  mention        -         -        -        -         -
watcher/private  custom+        -         -        -        -         -
watcher/private  custom-        -         -        -        -         -
watcher/private  global>watch   -         -        -        -         -
watcher/private  group>watch    -         -        -        -         -
watcher/private  default        -         -        -        -         -

watcher/public   disabled       -         -        -        -         -
watcher/public   participating  -         -        -        -         -
watcher/public   watch          W         W        W        -         -
watcher/public   mention        -         -        -        -         -
watcher/public   custom+        C         C        C        -         -
watcher/public   custom-        -         -        -        -         -
watcher/public   global>watch   W         W        W        -         -
watcher/public   group>watch    W         W        W        -         -
watcher/public   default        -         -        -        -         -

author           disabled       -         -        -        -         -
author           participating  -         -        -        P         -
author           watch          -         -        -        P         -
author           mention        -         -        -        -         -
author           custom+        -         -        -        C         C
author           custom-        -         -        -        -         -
author           global>watch   -         -        -        P         -
author           group>watch    -         -        -        P         -
author           default        -         -        -        P         -

blocked          disabled       -         -        -        -         -
blocked          participating  -         -        -        -         -
blocked          watch          -         -        -        -         -
blocked          mention        -         -        -        -         -
blocked          custom+        -         -        -        -         -
blocked          custom-        -         -        -        -         -
blocked          global>watch   -         -        -        -         -
blocked          group>watch    -         -        -        -         -
blocked          default        -         -        -        -         -
`;

const reasons: Record<string, Recipient['reason'] | null> = { P: 'participating', M: 'mentioned', W: 'watching', C: 'custom', '-': null };

interface Row {
  relationship: Relationship;
  level: Level;
  kind: NotificationEvent;
  expected: Recipient['reason'] | null;
}

function parse(table: string): Row[] {
  const lines = table.trim().split('\n').filter((l) => l.trim() !== '');
  const rows: Row[] = [];
  for (const line of lines.slice(1)) {
    const [relationship, level, ...cells] = line.trim().split(/\s+/);
    if (cells.length !== kinds.length) throw new Error(`bad row: ${line}`);
    cells.forEach((cell, i) => {
      if (!(cell in reasons)) throw new Error(`bad cell ${cell} in: ${line}`);
      rows.push({ relationship: relationship as Relationship, level: level as Level, kind: kinds[i]!, expected: reasons[cell]! });
    });
  }
  return rows;
}

/** The world of one row: the subject user in the given relationship and level, plus an author and a bystander. */
function scenario(relationship: Relationship, level: Level, kind: NotificationEvent) {
  const b = new StoreBuilder();
  const group = b.group('acme', 'private');
  const project = b.project('widgets', relationship === 'watcher/public' ? 'public' : 'private', group);
  const author = b.user('author');
  const subject = b.user('subject', relationship === 'blocked' ? { state: 'blocked' } : {});
  b.member(project, author);

  switch (relationship) {
    case 'member':
      b.member(group, subject);
      break;
    case 'watcher/private':
    case 'watcher/public':
      break;
    default:
      b.member(project, subject);
  }

  switch (level) {
    case 'disabled':
    case 'participating':
    case 'watch':
    case 'mention':
      b.projectSetting(subject, project, level);
      break;
    case 'custom+':
      b.projectSetting(subject, project, 'custom', events([kind]));
      break;
    case 'custom-':
      b.projectSetting(subject, project, 'custom', eventsExcept([kind]));
      break;
    case 'global>watch':
      b.projectSetting(subject, project, 'global').globalSetting(subject, 'watch');
      break;
    case 'group>watch':
      b.groupSetting(subject, group, 'watch');
      break;
    case 'default':
      break;
  }

  const event: NotifiableEvent = { kind, project_id: project.id, author_id: author.id, participants: [author.id], mentioned: [] };
  switch (relationship) {
    case 'participant':
      event.participants = [author.id, subject.id];
      break;
    case 'mentioned':
      event.mentioned = [subject.id];
      break;
    case 'author':
      event.author_id = subject.id;
      event.participants = [subject.id];
      break;
    case 'blocked':
      event.participants = [author.id, subject.id];
      event.mentioned = [subject.id];
      break;
    default:
      break;
  }
  return { data: b.data, subject, event };
}

describe('recipientsFor: level × relationship × event', () => {
  const rows = parse(expectations);

  it('the table covers every level, relationship and kind once', async () => {
    expect(rows).toHaveLength(9 * 7 * kinds.length);
    expect(new Set(rows.map((r) => `${r.relationship}/${r.level}/${r.kind}`)).size).toBe(rows.length);
  });

  it.each(rows)('$relationship at $level, $kind → $expected', async ({ relationship, level, kind, expected }) => {
    const { data, subject, event } = scenario(relationship, level, kind);
    const mine = (await recipientsFor(storageOf(data).recipients, event)).filter((r) => r.user_id === subject.id);
    expect(mine).toEqual(expected === null ? [] : [{ user_id: subject.id, username: subject.username, email: subject.email, reason: expected }]);
  });
});

describe('recipientsFor: every event kind', () => {
  const pipeline = new Set<NotificationEvent>(['failed_pipeline', 'success_pipeline']);

  it.each(notificationEvents.map((k) => [k]))('%s reaches a custom subscriber with its flag on, not one with it off', async (kind) => {
    const b = new StoreBuilder();
    const project = b.project('widgets', 'private', null, 'author');
    const author = b.user('author');
    const on = b.user('on');
    const off = b.user('off');
    b.member(project, author).member(project, on).member(project, off);
    b.projectSetting(on, project, 'custom', events([kind])).projectSetting(off, project, 'custom', eventsExcept([kind]));
    // Pipeline mail is only ever for the pipeline's user, so both are made that for pipeline events.
    const participants = pipeline.has(kind) ? [on.id, off.id] : [author.id];
    const got = await recipientsFor(b.storage().recipients, { kind, project_id: project.id, author_id: author.id, participants, mentioned: [] });
    expect(got).toEqual([{ user_id: on.id, username: on.username, email: 'on@example.com', reason: 'custom' }]);
  });

  it.each(notificationEvents.filter((k) => !pipeline.has(k)).map((k) => [k]))('%s reaches a watching member', async (kind) => {
    const b = new StoreBuilder();
    const project = b.project('widgets', 'internal', null, 'author');
    const author = b.user('author');
    const watcher = b.user('watcher');
    b.member(project, author).member(project, watcher).projectSetting(watcher, project, 'watch');
    const got = await recipientsFor(b.storage().recipients, { kind, project_id: project.id, author_id: author.id, participants: [author.id], mentioned: [] });
    expect(got.map((r) => [r.user_id, r.reason])).toEqual([[watcher.id, 'watching']]);
  });

  it('refuses an unknown kind and an unknown project', async () => {
    const b = new StoreBuilder();
    const project = b.project('widgets', 'public', null);
    const base = { project_id: project.id, author_id: 1, participants: [], mentioned: [] };
    await expect(recipientsFor(b.storage().recipients, { ...base, kind: 'push_to_merge_request' as NotificationEvent })).rejects.toThrow(RangeError);
    await expect(recipientsFor(b.storage().recipients, { ...base, kind: 'new_issue', project_id: 999 })).rejects.toThrow(RangeError);
  });
});

describe('recipientsFor: addresses, duplicates, order', () => {
  function world() {
    const b = new StoreBuilder();
    const group = b.group('acme', 'internal');
    const project = b.project('widgets', 'internal', group);
    const author = b.user('author');
    return { b, group, project, author };
  }

  it('mails the global notification_email when set, the account e-mail otherwise', async () => {
    const { b, project, author } = world();
    const withAddress = b.user('alice');
    const without = b.user('bob');
    b.globalSetting(withAddress, 'participating', { notification_email: 'alice-alerts@example.org' });
    b.globalSetting(without, 'participating');
    const got = await recipientsFor(b.storage().recipients, {
      kind: 'new_issue',
      project_id: project.id,
      author_id: author.id,
      participants: [author.id, withAddress.id, without.id],
      mentioned: [],
    });
    expect(got).toEqual([
      { user_id: withAddress.id, username: withAddress.username, email: 'alice-alerts@example.org', reason: 'participating' },
      { user_id: without.id, username: without.username, email: 'bob@example.com', reason: 'participating' },
    ]);
  });

  it('lists each user once, with the most specific reason, ordered by user id', async () => {
    const { b, group, project, author } = world();
    const z = b.user('z');
    const y = b.user('y');
    const x = b.user('x');
    b.member(group, x).member(project, y).member(project, z);
    b.projectSetting(x, project, 'watch').projectSetting(y, project, 'custom', events(['new_note'])).projectSetting(z, project, 'watch');
    const got = await recipientsFor(b.storage().recipients, {
      kind: 'new_note',
      project_id: project.id,
      author_id: author.id,
      participants: [z.id, z.id, y.id, author.id],
      mentioned: [z.id, x.id, x.id],
    });
    expect(got.map((r) => [r.user_id, r.reason])).toEqual([
      [z.id, 'mentioned'],
      [y.id, 'participating'],
      [x.id, 'mentioned'],
    ]);
  });

  it('ignores user ids that do not exist', async () => {
    const { b, project, author } = world();
    const got = await recipientsFor(b.storage().recipients, { kind: 'new_issue', project_id: project.id, author_id: author.id, participants: [404], mentioned: [405] });
    expect(got).toEqual([]);
  });
});

describe('recipientsFor: who counts as watching', () => {
  it('a user whose only setting is a global watch is not mailed about a project they have no tie to', async () => {
    const b = new StoreBuilder();
    const project = b.project('widgets', 'public', null, 'author');
    const author = b.user('author');
    const globalWatcher = b.user('everything');
    b.globalSetting(globalWatcher, 'watch');
    const got = await recipientsFor(b.storage().recipients, { kind: 'new_issue', project_id: project.id, author_id: author.id, participants: [author.id], mentioned: [] });
    expect(got).toEqual([]);
  });

  it('an admin watching a private project without being a member is mailed, as admins can read it', async () => {
    const b = new StoreBuilder();
    const project = b.project('widgets', 'private', null, 'author');
    const author = b.user('author');
    const admin = b.user('root', { is_admin: true });
    b.member(project, author).projectSetting(admin, project, 'watch');
    const got = await recipientsFor(b.storage().recipients, { kind: 'new_issue', project_id: project.id, author_id: author.id, participants: [author.id], mentioned: [] });
    expect(got.map((r) => [r.user_id, r.reason])).toEqual([[admin.id, 'watching']]);
  });

  it('a participant who can no longer see the private project is dropped', async () => {
    const b = new StoreBuilder();
    const project = b.project('widgets', 'private', null, 'author');
    const author = b.user('author');
    const former = b.user('former');
    b.member(project, author);
    const got = await recipientsFor(b.storage().recipients, { kind: 'new_note', project_id: project.id, author_id: author.id, participants: [former.id], mentioned: [former.id] });
    expect(got).toEqual([]);
  });

  it.each(['reassign_issue', 'reassign_merge_request'] as const)('%s reaches a mention-level assignee passed as mentioned', async (kind) => {
    const b = new StoreBuilder();
    const project = b.project('widgets', 'private', null, 'author');
    const author = b.user('author');
    const assignee = b.user('assignee');
    b.member(project, author).member(project, assignee).projectSetting(assignee, project, 'mention');
    const got = await recipientsFor(b.storage().recipients, { kind, project_id: project.id, author_id: author.id, participants: [author.id, assignee.id], mentioned: [assignee.id] });
    expect(got.map((r) => [r.user_id, r.reason])).toEqual([[assignee.id, 'mentioned']]);
  });
});
