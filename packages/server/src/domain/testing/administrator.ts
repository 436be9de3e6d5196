// The administrator whose personal access token opens the test-helper area: what a suite in any language needs first,
// without writing a seed. The programmatic start answers it as `adminToken`; the server takes one
// (--test-helpers-token) or prints a new one at start.
import { createPersonalAccessToken, findActivePersonalAccessToken } from '../accounts.js';
import { newSecret } from '../secrets.js';
import type { ScryptParameters } from '../passwords.js';
import { loadSeed } from '../seed/load.js';
import type { Storage } from '../storage/index.js';
import type { UserRecord } from '../storage/records.js';
import { ExplainedError } from '../../explained-error.js';

/**
 * The administrator `name`, or else the store's `root`, added as an administrator when there is none (as the
 * service's own installations have one). `who` names the caller in a refusal: whose setting to change.
 */
async function administrator(storage: Storage, name: string | undefined, who: string, hashing: ScryptParameters | undefined): Promise<UserRecord> {
  const user = await storage.users.byUsername(name ?? 'root');
  if (name !== undefined && !user?.is_admin) throw new ExplainedError(`${who} names ${JSON.stringify(name)}, who is not an administrator of the seed; add is_admin: true to that user, or leave it out`);
  if (user && !user.is_admin) throw new ExplainedError(`${who}: the store has a user "root" who is not an administrator; make them one (tokenbell users set-admin --username root) or name an administrator`);
  if (user) return user;
  await loadSeed(storage, { users: [{ username: 'root', email: 'root@tokenbell.invalid', name: 'Administrator', password: newSecret('clientSecret'), is_admin: true }] }, hashing ? { hashing } : {});
  return (await storage.users.byUsername('root'))!;
}

/**
 * A personal access token (scope `api`) of the administrator: `token` itself when given, registered once (a restart
 * with the same token finds it, and a token that is already someone else's is refused), else a new one. A `root` added
 * gets a random password hashed with `hashing` (the instance's seed's parameters).
 */
export async function testHelpersAdministratorToken(
  storage: Storage,
  options: { admin?: string; token?: string; who: string; tokenName: string; hashing?: ScryptParameters },
): Promise<string> {
  if (options.token !== undefined) {
    const found = await findActivePersonalAccessToken(storage, options.token);
    if (found?.user.is_admin && found.record.scopes.includes('api')) return options.token;
    if (found) throw new ExplainedError(`${options.who}: that token is already ${found.user.username}'s, who is not an administrator or whose token lacks scope api; choose another`);
  }
  const admin = await administrator(storage, options.admin, options.who, options.hashing);
  return (await createPersonalAccessToken(storage, admin.id, { name: options.tokenName, scopes: ['api'], ...(options.token === undefined ? {} : { token: options.token }) })).token;
}
