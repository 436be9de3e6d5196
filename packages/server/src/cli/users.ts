// `tokenbell users ...`: account chores for an operator, on the data file while no server runs on it (the file's lock
// refuses a second writer, with a message naming the server's process). Values checked as the seed checks them.
import { databaseUrlOf, defaultOf } from '../config.js';
import { type CredentialsChanged, createPersonalAccessToken, createUser, deleteUser, listUsers, resetPassword, setAdmin, setBlocked, setTwoFactor, userByLogin } from '../domain/accounts.js';
import { ConfigError } from '../explained-error.js';
import { openBackend } from '../store/backend.js';
import type { Scope, UserRecord } from '../domain/storage/index.js';
import { isoOf } from '../domain/time.js';
import { parseFlags, required, subcommand } from '../flags.js';

export const usersUsage = `Usage: tokenbell users <command> [--data FILE | --database-url URL]

  create --username U --email E --name NAME --password P [--admin]
                        add a user
  reset-password --username U --password P [--revoke-tokens]
                        set a new password (U may be the e-mail address); U's browser
                        sessions end, and with --revoke-tokens every token of U too
  token --username U --name NAME [--scopes api,read_api,read_user] [--expires YYYY-MM-DD]
                        create a personal access token and print it, once; --expires is
                        its last valid day (UTC), today or later
  list [--json]         every user: id, username, e-mail, active/blocked, admin, two-factor
  block --username U    stop U signing in and every token of U working, until unblocked
  unblock --username U
  set-admin --username U [--off]
                        make U an administrator, or (--off) no longer one
  two-factor --username U --on [--revoke-tokens] | --off
                        --on: a new TOTP secret for U, printed once with its otpauth:// URI,
                        and U's browser sessions end (with --revoke-tokens, every token too);
                        --off: none (U signs in with the password alone)
  delete --username U   delete U and everything theirs (tokens, grants, memberships, settings,
                        mail, applications, personal projects); refused while U is the only
                        owner of a group

  --data FILE           the data file (TOKENBELL_DATA, default ${defaultOf('data')}); stop the server first
  --database-url URL    the PostgreSQL database (DATABASE_URL) instead; servers may keep running
`;

export async function runUsersCommand(args: string[], env: NodeJS.ProcessEnv, print: (line: string) => void): Promise<void> {
  const chosen = subcommand(args, 'users', ['create', 'reset-password', 'token', 'list', 'block', 'unblock', 'set-admin', 'two-factor', 'delete'], usersUsage, print);
  if (!chosen) return;
  const { command, rest } = chosen;
  const { values } = parseFlags(rest, { data: 'string', 'database-url': 'string', username: 'string', email: 'string', name: 'string', password: 'string', admin: 'boolean', scopes: 'string', expires: 'string', json: 'boolean', on: 'boolean', off: 'boolean', 'revoke-tokens': 'boolean' });
  const need = required(values, `users ${command}`);
  // Refused before the store is opened: `two-factor` with neither or both would do something not asked for.
  if (command === 'two-factor' && values.on === values.off) throw new ConfigError('users two-factor needs --on or --off');
  const revokeTokens = values['revoke-tokens'] ?? false;
  const databaseUrl = databaseUrlOf(values, env);
  const { storage } = await openBackend({ dataFile: values.data ?? env.TOKENBELL_DATA ?? defaultOf('data'), databaseUrl, databasePoolSize: 2, migrate: false });
  try {
    if (command === 'create') {
      const user = await createUser(storage, { username: need('username'), email: need('email'), name: need('name'), password: need('password'), is_admin: values.admin ?? false });
      print(`created user ${user.username} (id ${user.id})`);
    } else if (command === 'reset-password') {
      const changed = await resetPassword(storage, need('username'), need('password'), { revokeTokens });
      print(`set a new password for ${changed.user.username}; ${ended(changed, revokeTokens)}`);
    } else if (command === 'list') {
      const users = await listUsers(storage);
      if (values.json) print(JSON.stringify(users.map(listed), null, 2));
      else for (const user of users) print([user.id, user.username, user.email, user.state, user.is_admin ? 'admin' : '-', user.two_factor_enabled ? 'two-factor' : '-'].join('\t'));
    } else if (command === 'block' || command === 'unblock') {
      const user = await setBlocked(storage, need('username'), command === 'block');
      print(`${user.username} is ${user.state}`);
    } else if (command === 'set-admin') {
      const user = await setAdmin(storage, need('username'), !values.off);
      print(`${user.username} is ${user.is_admin ? 'now' : 'no longer'} an administrator`);
    } else if (command === 'two-factor') {
      if (values.on) {
        const { secret, uri, ...changed } = await setTwoFactor(storage, need('username'), true, { revokeTokens });
        print(`two-factor authentication is on for ${changed.user.username}; ${ended(changed, revokeTokens)}`);
        print('give them this URI (or the secret after it) for an authenticator app, shown only this once:');
        print(uri);
        print(secret);
      } else {
        const { user } = await setTwoFactor(storage, need('username'), false);
        print(`two-factor authentication is off for ${user.username}`);
      }
    } else if (command === 'delete') {
      const user = await deleteUser(storage, need('username'));
      print(`deleted user ${user.username} (id ${user.id}) and everything theirs`);
    } else {
      const user = await userByLogin(storage, need('username'));
      const scopes = values.scopes?.split(',').map((s) => s.trim()) as Scope[] | undefined;
      const { record, token } = await createPersonalAccessToken(storage, user.id, {
        name: need('name'),
        expires_at: values.expires ?? null,
        ...(scopes ? { scopes } : {}),
      });
      print(`created personal access token "${record.name}" for ${user.username} (scopes ${record.scopes.join(', ')}); it is shown only this once:`);
      print(token);
    }
  } finally {
    await storage.maintenance.close();
  }
}

/** What `list --json` shows of a user: never the password's hash or the TOTP secret. */
function listed(user: UserRecord) {
  const { id, username, email, secondary_emails, name, state, is_admin, two_factor_enabled, created_at } = user;
  return { id, username, email, secondary_emails, name, state, is_admin, two_factor_enabled, created_at: isoOf(created_at) };
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

/** What a change of credentials ended, in a line's second half. */
const ended = ({ sessionsEnded, tokensRevoked }: CredentialsChanged, revokeTokens: boolean) =>
  `ended ${plural(sessionsEnded, 'browser session')}${revokeTokens ? ` and revoked ${plural(tokensRevoked, 'token')}` : ''}`;
