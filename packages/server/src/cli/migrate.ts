// `tokenbell migrate`: brings a PostgreSQL database's schema up to this version's, under an advisory lock, so it is
// safe to run from several places at once (a deploy step, or each instance's start-up).
import { databaseUrlFrom } from '../config.js';
import { ConfigError } from '../explained-error.js';
import { migrate } from '../store/postgres/migrate.js';
import { parseFlags } from '../flags.js';

export const migrateUsage = `Usage: tokenbell migrate --database-url postgres://USER:PASSWORD@HOST:PORT/DATABASE

  --database-url URL    the PostgreSQL database (DATABASE_URL); TLS options go in the URL (?sslmode=require)
`;

export async function runMigrateCommand(args: string[], env: NodeJS.ProcessEnv, print: (line: string) => void): Promise<void> {
  if (args.includes('--help') || args.includes('-h')) {
    print(migrateUsage);
    return;
  }
  const { values } = parseFlags(args, { 'database-url': 'string' });
  const url = values['database-url'] ?? env.DATABASE_URL;
  if (!url) throw new ConfigError(`migrate needs --database-url (or DATABASE_URL)\n\n${migrateUsage}`);
  const { applied } = await migrate(databaseUrlFrom({ value: url, name: values['database-url'] !== undefined ? '--database-url' : 'DATABASE_URL' }));
  print(applied.length === 0 ? 'the database schema is current; nothing to do' : `applied ${applied.length} migration(s): ${applied.join(', ')}`);
}
