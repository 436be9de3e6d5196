import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/explained-error.js';
import { updateGlobal } from '../../src/domain/notification-settings.js';
import { StoreBuilder } from './fixtures.js';

/** jane, with a secondary address, and joe; the storage over both. */
function janeAndJoe() {
  const builder = new StoreBuilder();
  const jane = builder.user('jane', { secondary_emails: ['Jane@Work.example'] });
  const joe = builder.user('joe');
  const storage = builder.storage();
  const stored = () => storage.notificationSettings.find({ user_id: jane.id, source_type: 'global', source_id: null });
  return { storage, jane, joe, stored };
}

describe('updateGlobal: the notification e-mail (GitLab: one of the user\'s own addresses)', () => {
  it('takes the primary address, or a secondary one in any case, and stores it as sent', async () => {
    const { storage, jane, stored } = janeAndJoe();
    expect(await updateGlobal(storage.notificationSettings, jane, { notification_email: 'JANE@example.com' })).toEqual({ level: 'participating', notification_email: 'JANE@example.com' });
    expect(await updateGlobal(storage.notificationSettings, jane, { level: 'watch', notification_email: 'jane@WORK.example' })).toEqual({ level: 'watch', notification_email: 'jane@WORK.example' });
    expect(await stored()).toMatchObject({ level: 'watch', notification_email: 'jane@WORK.example' });
  });

  it('goes back to the primary address when sent an empty one', async () => {
    const { storage, jane } = janeAndJoe();
    await updateGlobal(storage.notificationSettings, jane, { notification_email: 'Jane@Work.example' });
    expect(await updateGlobal(storage.notificationSettings, jane, { notification_email: '' })).toEqual({ level: 'participating', notification_email: 'jane@example.com' });
  });

  it.each([
    ["another user's address", 'joe@example.com'],
    ['an address no user has', 'jane@elsewhere.example'],
  ])('refuses %s, and stores nothing of the request', async (_label, address) => {
    const { storage, jane, stored } = janeAndJoe();
    await updateGlobal(storage.notificationSettings, jane, { level: 'mention', notification_email: 'Jane@Work.example' });
    const before = await stored();
    const refusal = await updateGlobal(storage.notificationSettings, jane, { level: 'watch', notification_email: address, new_note: true }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(InputError);
    expect(refusal).toMatchObject({ field: 'notification_email', code: 'invalid', message: 'is not an email you own' });
    expect(await stored()).toEqual(before);
  });
});
