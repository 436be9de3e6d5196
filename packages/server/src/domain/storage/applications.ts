// What the domain asks of OAuth applications.
import type { ApplicationRecord, EpochSeconds } from './records.js';

export type NewApplicationRow = Omit<ApplicationRecord, 'id'>;

export interface ApplicationStorage {
  byId(id: number): Promise<ApplicationRecord | undefined>;
  byUid(uid: string): Promise<ApplicationRecord | undefined>;
  /** The owner's applications, oldest first. */
  ownedBy(ownerId: number): Promise<ApplicationRecord[]>;
  /** Throws InputError `taken` when the App ID is taken. */
  create(application: NewApplicationRow): Promise<ApplicationRecord>;
  /**
   * Deletes the owner's application with its pending codes, and revokes every live token issued to it (revoked
   * records stay until pruned, so a later use reads as revoked). False when the owner has no such application.
   */
  deleteOwned(ownerId: number, id: number, now: EpochSeconds): Promise<boolean>;
}
