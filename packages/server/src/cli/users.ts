// `tokenbell users ...`: account chores for an operator, on the data file while no server runs on it (the file's lock
// refuses a second writer, with a message naming the server's process). Values checked as the seed checks them. A
// password comes from standard input, TOKENBELL_PASSWORD or --password-file (secrets.ts); a secret printed once (a
// token, a TOTP secret) that cannot reach standard output is taken back, so nothing is made that nobody can use.
import type { Readable } from 'node:stream';
import { databaseUrlOf, defaultOf } from '../config.js';
import { type CredentialsChanged, createPersonalAccessToken, createUser, deleteUser, listUsers, resetPassword, revokePersonalAccessToken, setAdmin, setBlocked, setTwoFactor, userByLogin } from '../domain/accounts.js';
import { ConfigError, ExplainedError } from '../explained-error.js';
import { openBackend } from '../store/backend.js';
import type { Scope, UserRecord } from '../domain/storage/index.js';
import { isoOf } from '../domain/time.js';
import { parseFlags, required, subcommand } from '../flags.js';
import type { Print } from './output.js';
import { readSecret } from './secrets.js';

export const usersUsage = `Usage: tokenbell users <command> [--data FILE | --database-url URL]

  create --username U --email E --name NAME [--password-file FILE] [--admin]
                        add a user
  reset-password --username U [--password-file FILE] [--revoke-tokens]
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

  The password of create and reset-password is read from --password-file FILE (- for standard input), else from
  TOKENBELL_PASSWORD, else from standard input (typed without echo at a terminal; piped, all of it less one final
  newline). --password P still works but is seen by every user of the machine (ps) and kept in the shell's history.
  A token or TOTP secret that cannot be printed (standard output closed) is revoked or taken back, and the command
  fails: nothing is left that nobody saw.
`;

export async function runUsersCommand(args: string[], env: NodeJS.ProcessEnv, print: Print, input: Readable = process.stdin): Promise<void> {
  const chosen = subcommand(args, 'users', ['create', 'reset-password', 'token', 'list', 'block', 'unblock', 'set-admin', 'two-factor', 'delete'], usersUsage, print);
  if (!chosen) return;
  const { command, rest } = chosen;
  const { values } = parseFlags(rest, { data: 'string', 'database-url': 'string', username: 'string', email: 'string', name: 'string', password: 'string', 'password-file': 'string', admin: 'boolean', scopes: 'string', expires: 'string', json: 'boolean', on: 'boolean', off: 'boolean', 'revoke-tokens': 'boolean' });
  const need = required(values, `users ${command}`);
  // Refused before the store is opened: `two-factor` with neither or both would do something not asked for.
  if (command === 'two-factor' && values.on === values.off) throw new ConfigError('users two-factor needs --on or --off');
  const revokeTokens = values['revoke-tokens'] ?? false;
  const databaseUrl = databaseUrlOf(values, env);
  // Read before the store is opened, a prompt must not hold the data file's lock while someone types; after the flags
  // are checked, so that a missing one is named without a password typed for nothing.
  if (command === 'create') for (const flag of ['username', 'email', 'name'] as const) need(flag);
  if (command === 'reset-password') need('username');
  const password = command === 'create' || command === 'reset-password' ? await passwordOf(values, env, input, `users ${command}`) : undefined;
  const { storage } = await openBackend({ dataFile: values.data ?? env.TOKENBELL_DATA ?? defaultOf('data'), databaseUrl, databasePoolSize: 2, migrate: false });
  try {
    if (command === 'create') {
      const user = await createUser(storage, { username: need('username'), email: need('email'), name: need('name'), password: password!, is_admin: values.admin ?? false });
      print(`created user ${user.username} (id ${user.id})`);
    } else if (command === 'reset-password') {
      const changed = await resetPassword(storage, need('username'), password!, { revokeTokens });
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
        const before = await userByLogin(storage, need('username'));
        const { secret, uri, ...changed } = await setTwoFactor(storage, need('username'), true, { revokeTokens });
        const { user } = changed;
        const shown = await print(`two-factor authentication is on for ${user.username}; ${ended(changed, revokeTokens)}\ngive them this URI (or the secret after it) for an authenticator app, shown only this once:\n${uri}\n${secret}`);
        if (shown === false) {
          await storage.users.setOtpSecret(user.id, before.otp_secret ?? null);
          throw new UnprintedError(`the new TOTP secret for ${user.username} could not be printed (standard output is closed), so it was taken back: two-factor authentication is as it was; run the command again with its output read to the end`);
        }
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
      const shown = await print(`created personal access token "${record.name}" for ${user.username} (scopes ${record.scopes.join(', ')}); it is shown only this once:\n${token}`);
      if (shown === false) {
        await revokePersonalAccessToken(storage, user.id, record.id);
        throw new UnprintedError(`the personal access token "${record.name}" for ${user.username} could not be printed (standard output is closed), so it was revoked; run the command again with its output read to the end`);
      }
    }
  } finally {
    await storage.maintenance.close();
  }
}

/** A secret made and then taken back because it could not be shown. */
class UnprintedError extends ExplainedError {}

/** The password of `create` and `reset-password`, from wherever the operator gave it (secrets.ts); required. */
async function passwordOf(values: { password?: string; 'password-file'?: string }, env: NodeJS.ProcessEnv, input: Readable, command: string): Promise<string> {
  const password = await readSecret({
    label: 'password',
    command,
    commandLine: { flag: '--password', value: values.password },
    file: { flag: '--password-file', value: values['password-file'] },
    variable: 'TOKENBELL_PASSWORD',
    env,
    input,
    inputByDefault: true,
  });
  // Checked as every password is (8 to 1024 characters) where it is used; an empty one means nothing was given.
  if (!password) throw new ConfigError(`${command} needs a password: on standard input, in TOKENBELL_PASSWORD, or with --password-file FILE`);
  return password;
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
