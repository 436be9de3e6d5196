// `tokenbell users ...`: account chores for an operator, on the data file while no server runs on it (the file's lock
// refuses a second writer, with a message naming the server's process). Values checked as the seed checks them.
import { databaseUrlOf, defaultOf } from '../config.js';
import { createPersonalAccessToken, createUser, resetPassword } from '../domain/accounts.js';
import { InputError } from '../explained-error.js';
import { openBackend } from '../store/backend.js';
import type { Scope } from '../domain/storage/index.js';
import { parseFlags, required, subcommand } from '../flags.js';

export const usersUsage = `Usage: tokenbell users <command> [--data FILE | --database-url URL]

  create --username U --email E --name NAME --password P [--admin]
                        add a user
  reset-password --username U --password P
                        set a new password (U may be the e-mail address)
  token --username U --name NAME [--scopes api,read_api,read_user] [--expires YYYY-MM-DD]
                        create a personal access token and print it, once

  --data FILE           the data file (TOKENBELL_DATA, default ${defaultOf('data')}); stop the server first
  --database-url URL    the PostgreSQL database (DATABASE_URL) instead; servers may keep running
`;

export async function runUsersCommand(args: string[], env: NodeJS.ProcessEnv, print: (line: string) => void): Promise<void> {
  const chosen = subcommand(args, 'users', ['create', 'reset-password', 'token'], usersUsage, print);
  if (!chosen) return;
  const { command, rest } = chosen;
  const { values } = parseFlags(rest, { data: 'string', 'database-url': 'string', username: 'string', email: 'string', name: 'string', password: 'string', admin: 'boolean', scopes: 'string', expires: 'string' });
  const need = required(values, `users ${command}`);
  const databaseUrl = databaseUrlOf(values, env);
  const { storage } = await openBackend({ dataFile: values.data ?? env.TOKENBELL_DATA ?? defaultOf('data'), databaseUrl, databasePoolSize: 2, migrate: false });
  try {
    if (command === 'create') {
      const user = await createUser(storage, { username: need('username'), email: need('email'), name: need('name'), password: need('password'), is_admin: values.admin ?? false });
      print(`created user ${user.username} (id ${user.id})`);
    } else if (command === 'reset-password') {
      const user = await resetPassword(storage, need('username'), need('password'));
      print(`set a new password for ${user.username}`);
    } else {
      const user = await storage.users.byLogin(need('username'));
      if (!user) throw new InputError('username', `there is no user ${JSON.stringify(values.username)}`, 'unknown');
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
