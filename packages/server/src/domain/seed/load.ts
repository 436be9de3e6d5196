// Loading a fixture: checked whole, then written at once.
import { readFile } from 'node:fs/promises';
import { hashPassword, productionHashing, type ScryptParameters } from '../passwords.js';
import { InputError } from '../../explained-error.js';
import type { Storage } from '../storage/index.js';
import { SeedError, type SeedSummary } from './fixture.js';
import { noStoredEntries, storedEntries } from './existing.js';
import { namesIn, plan, rowsOf } from './plan.js';

export interface LoadSeedOptions {
  /**
   * False for the test kit's create calls, which are creates: every name the store has is refused as taken. True
   * (the default) skips an entry the store has already when identical.
   */
  skipIdentical?: boolean;
  /** What plain passwords are hashed with: production's unless a test instance asks for cheapHashing. */
  hashing?: ScryptParameters;
}

/**
 * Loads a fixture (see SeedFixture): checks all of it first and throws SeedError listing every problem without
 * writing anything, then hashes the passwords (a `password_hash` is kept as given) and applies everything at once. An
 * entry the store has already is skipped when identical and a problem when not, so the same fixture loads again at
 * every start. A name another request took meanwhile is refused by the store, and nothing of the fixture is applied.
 */
export async function loadSeed(storage: Storage, fixture: unknown, { skipIdentical = true, hashing = productionHashing }: LoadSeedOptions = {}): Promise<SeedSummary> {
  const found = await storage.maintenance.existingNames(namesIn(fixture));
  const { plan: steps, problems } = plan(found, fixture, skipIdentical ? await storedEntries(storage, found) : noStoredEntries());
  if (problems.length > 0) throw new SeedError(problems);
  const hashes = await Promise.all(steps.users.map(({ user }) => user.password_hash ?? hashPassword(user.password, hashing)));
  const rows = rowsOf(steps, hashes);
  try {
    // A fixture loaded before writes nothing at all.
    if (Object.values(rows).some((list) => list.length > 0)) await storage.maintenance.applySeed(rows);
  } catch (error) {
    if (error instanceof InputError) throw new SeedError([`${error.field}: ${error.message}`]);
    throw error;
  }
  return {
    users: steps.users.length,
    personalAccessTokens: steps.users.reduce((n, { tokens }) => n + tokens.length, 0),
    groups: steps.groups.length,
    projects: steps.projects.length,
    applications: steps.applications.length,
    unchanged: steps.unchanged,
  };
}

/** Reads a JSON fixture file and loads it; errors name the file. */
export async function loadSeedFile(storage: Storage, file: string, options: Pick<LoadSeedOptions, 'hashing'> = {}): Promise<SeedSummary> {
  let fixture: unknown;
  try {
    fixture = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new SeedError([`${file}: ${(error as Error).message}`]);
  }
  try {
    return await loadSeed(storage, fixture, options);
  } catch (error) {
    if (error instanceof SeedError) throw new SeedError(error.problems.map((p) => `${file}: ${p}`));
    throw error;
  }
}
