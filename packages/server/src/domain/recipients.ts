// Who is mailed about an event, following GitLab's NotificationService and its recipient builders:
//   app/services/notification_recipients/builder/default.rb and new_note.rb  (who becomes a candidate, and as what)
//   app/models/notification_recipient.rb  (#notifiable?, #suitable_notification_level?: which candidates remain)
//   app/models/notification_setting.rb    (EXCLUDED_WATCHER_EVENTS)
//   app/services/notification_recipient_service.rb #build_pipeline_recipients (GitLab 9.1, MR gitlab-foss!10333
//     "Quiet pipeline emails") and NotificationService#pipeline_finished (pipeline mail goes to the pipeline's user)
// GitLab first collects candidates, each tagged with why it was added (participating, mention, watch, custom), then
// keeps a candidate only when the user's resolved level accepts that tag, and finally keeps one entry per user. The
// same three steps are below.
import { notificationEvents } from '../openapi/document.js';
import type { Audience, RecipientStorage } from './storage/index.js';
import type { NotificationEvent } from './storage/records.js';
import { effectiveSetting, notificationEmailOf, type EffectiveSetting } from './notification-levels.js';
import { canSeeProjectWith } from './visibility.js';
import { isActive } from './users.js';

export interface NotifiableEvent {
  kind: NotificationEvent;
  project_id: number;
  /** Who did it; never mailed about their own action (GitLab's default, `notified_of_own_activity` off). */
  author_id: number;
  /** The thread's participants (author, assignees, commenters); for pipelines the pipeline's user. */
  participants: number[];
  /**
   * Users @-mentioned in this event's text. For reassign_* pass the previous and new assignees here too: GitLab
   * treats a re-assignment as a mention of them.
   */
  mentioned: number[];
}

export type RecipientReason = 'participating' | 'mentioned' | 'watching' | 'custom';

export interface Recipient {
  user_id: number;
  username: string;
  email: string;
  reason: RecipientReason;
}

/** GitLab's recipient types (NotificationRecipient#type), which the level check looks at. */
type CandidateType = 'participating' | 'mention' | 'watch' | 'custom';

interface Candidate {
  userId: number;
  type: CandidateType;
  reason: RecipientReason;
}

const pipelineEvents: ReadonlySet<NotificationEvent> = new Set<NotificationEvent>(['failed_pipeline', 'success_pipeline']);
/** A pipeline's result is mailed to the pipeline's user alone, who is its only participant. */
export const isPipelineEvent = (kind: NotificationEvent) => pipelineEvents.has(kind);

// GitLab's Builder::Default adds mentioned users as :mention only for new issues and merge requests
// (MENTION_TYPE_ACTIONS), Builder::NewNote for the note's own mentions, and re-assignment adds the assignees as
// :mention. For the other actions the mentioned users reach GitLab only as participants of the issuable (its
// description's mentions are part of #participants), so a user on the `mention` level is not mailed when an issue
// they were once mentioned in is closed.
const mentionEvents: ReadonlySet<NotificationEvent> = new Set<NotificationEvent>([
  'new_issue',
  'new_merge_request',
  'new_note',
  'reassign_issue',
  'reassign_merge_request',
]);

// NotificationSetting::EXCLUDED_WATCHER_EVENTS, restricted to the events this service knows. GitLab 9.1's
// #build_pipeline_recipients applied the same exclusion to the `participating` level (later kept as
// EXCLUDED_PARTICIPATING_EVENTS): success mail only ever goes to someone who switched it on in a custom setting.
const excludedForWatch: ReadonlySet<NotificationEvent> = new Set<NotificationEvent>(['success_pipeline']);
const excludedForParticipating: ReadonlySet<NotificationEvent> = new Set<NotificationEvent>(['success_pipeline']);

/** NotificationRecipient#suitable_notification_level?. */
function levelAccepts(setting: EffectiveSetting, type: CandidateType, kind: NotificationEvent): boolean {
  switch (setting.level) {
    case 'disabled':
      return false;
    case 'custom':
      return setting.events[kind] || type === 'participating' || type === 'mention';
    case 'watch':
      return !excludedForWatch.has(kind);
    case 'participating':
      return !excludedForParticipating.has(kind);
    case 'mention':
      return type === 'mention';
  }
}

// When one user was added several ways GitLab keeps the entry with the most specific reason
// (NotificationReason.priority puts `mentioned` first; the others have no reason and keep insertion order:
// participants, then watchers, then custom).
const reasonPriority: Record<RecipientReason, number> = { mentioned: 0, participating: 1, watching: 2, custom: 3 };

function candidatesFor(audience: Audience, event: NotifiableEvent): Candidate[] {
  if (pipelineEvents.has(event.kind)) {
    // NotificationService#pipeline_finished: only the pipeline's user, tagged :watch, so `custom` needs the event's
    // flag and `mention` never qualifies. Watchers, members and mentions are not consulted.
    return event.participants.map((userId) => ({ userId, type: 'watch', reason: 'participating' }));
  }
  const mentionType: CandidateType = mentionEvents.has(event.kind) ? 'mention' : 'participating';
  const candidates: Candidate[] = [
    ...event.participants.map((userId): Candidate => ({ userId, type: 'participating', reason: 'participating' })),
    ...event.mentioned.map(
      (userId): Candidate => ({ userId, type: mentionType, reason: mentionType === 'mention' ? 'mentioned' : 'participating' }),
    ),
  ];
  for (const userId of audience.interested) {
    const member = audience.members.get(userId);
    if (!member) continue;
    const setting = effectiveSetting(member.settings);
    // Builder::Base#add_project_watchers / #add_custom_notifications select on the resolved level.
    if (setting.level === 'watch') candidates.push({ userId, type: 'watch', reason: 'watching' });
    else if (setting.level === 'custom' && setting.events[event.kind]) candidates.push({ userId, type: 'custom', reason: 'custom' });
  }
  return candidates;
}

/** The recipients of the event among the project's audience (RecipientStorage.audience), by user id. */
export async function recipientsFor(recipients: RecipientStorage, event: NotifiableEvent): Promise<Recipient[]> {
  const audience = await recipients.audience(event.project_id, [...event.participants, ...event.mentioned]);
  if (!audience) throw new RangeError(`unknown project: ${event.project_id}`);
  return recipientsAmong(audience, event);
}

export function recipientsAmong(audience: Audience, event: NotifiableEvent): Recipient[] {
  if (!notificationEvents.includes(event.kind)) throw new RangeError(`unknown notification event: ${String(event.kind)}`);
  const { project, members } = audience;
  // Pipeline mail is sent with no acting user (#pipeline_finished passes none), so the pipeline's own user is mailed
  // even when they pushed the commit; for every other event the author is left out.
  const skipAuthor = !pipelineEvents.has(event.kind);
  const best = new Map<number, Candidate>();
  const settings = new Map<number, EffectiveSetting>();

  for (const c of candidatesFor(audience, event)) {
    const member = members.get(c.userId);
    const user = member?.user;
    // NotificationRecipient#notifiable?: has_access? (receive_notifications is refused to blocked users, then
    // read_project), then own_activity?, then the level.
    if (!member || !isActive(user) || !canSeeProjectWith(user, project, member.access)) continue;
    if (skipAuthor && user.id === event.author_id) continue;
    let setting = settings.get(user.id);
    if (!setting) {
      setting = effectiveSetting(member.settings);
      settings.set(user.id, setting);
    }
    if (!levelAccepts(setting, c.type, event.kind)) continue;
    // Pipeline mail to a custom-level user goes out only because of the flag, so say so.
    const reason: RecipientReason = pipelineEvents.has(event.kind) && setting.level === 'custom' ? 'custom' : c.reason;
    const previous = best.get(user.id);
    if (!previous || reasonPriority[reason] < reasonPriority[previous.reason]) best.set(user.id, { ...c, reason });
  }

  return [...best.values()]
    .sort((a, b) => a.userId - b.userId)
    .map((c) => {
      const { user, settings } = members.get(c.userId)!;
      return { user_id: c.userId, username: user.username, email: notificationEmailOf(settings.global, user), reason: c.reason };
    });
}

