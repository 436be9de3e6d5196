// `tokenbell keys rotate`: a new id_token signing key, published at once and signing ten minutes later (the JWK set's
// cache lifetime), the previous one still published for a day after it hands over; `--drop-retired` for a key that
// leaked. On the data file the server must be stopped first, as for `tokenbell users` (the file's lock refuses a second
// writer, naming the running one); on PostgreSQL the instances keep running and follow the rotation, since each asks
// the database which key signs.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { databaseUrlOf, defaultOf } from '../config.js';
import { handoverMargin, keySetLifetime, rotateSigningKey, type Rotation } from '../domain/oidc/signing-keys.js';
import { ConfigError } from '../explained-error.js';
import { parseFlags, subcommand } from '../flags.js';
import { openBackend } from '../store/backend.js';
import { StoreLockedError } from '../store/errors.js';

export const keysUsage = `Usage: tokenbell keys rotate [--drop-retired] [--data FILE | --database-url URL]

  rotate                make a new key to sign id_tokens with: published at once, it signs ${keySetLifetime / 60} minutes and
                        ${handoverMargin} s later, once no client's cached copy of the key set lacks it; the previous key
                        signs until then and stays published a day more, so that id_tokens it signed still verify;
                        older keys are dropped

  --drop-retired        for a key that leaked: the new key signs at once, and every other key is unpublished at once
                        (id_tokens they signed stop verifying; verifiers fetch the set again on meeting the new kid)
  --data FILE           the data file (TOKENBELL_DATA, default ${defaultOf('data')}); stop the server first, it uses
                        the new key from its next start
  --database-url URL    the PostgreSQL database (DATABASE_URL) instead; servers keep running and follow the rotation
`;

/** The flags, read strictly; a mistake is one line naming it, with the usage a command away. */
function flagsOf(args: string[]) {
  try {
    return parseFlags(args, { data: 'string', 'database-url': 'string', 'drop-retired': 'boolean', help: 'boolean' }).values;
  } catch (error) {
    if (!(error as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS')) throw error;
    // Node's first sentence names the flag; the rest is about positional arguments, which this command has none of.
    throw new ConfigError(`keys rotate: ${(error as Error).message.split('. ')[0]!.replace(/\.$/, '')}; it takes --data FILE or --database-url URL (tokenbell keys --help)`);
  }
}

export async function runKeysCommand(args: string[], env: NodeJS.ProcessEnv, print: (line: string) => void): Promise<void> {
  const chosen = subcommand(args, 'keys', ['rotate'], keysUsage, print);
  if (!chosen) return;
  const values = flagsOf(chosen.rest);
  if (values.help) return print(keysUsage);
  if (values.data !== undefined && values['database-url'] !== undefined) {
    throw new ConfigError('--database-url and --data contradict each other: rotate the keys of the database or of the data file, not both');
  }
  const databaseUrl = databaseUrlOf(values, env);
  const dataFile = values.data ?? env.TOKENBELL_DATA ?? defaultOf('data');
  // A misspelt path would otherwise become a new data file holding nothing but a key no server uses.
  if (databaseUrl === null && !existsSync(dataFile)) {
    throw new ConfigError(`there is no data file ${resolve(dataFile)}; name the server's with --data FILE (or TOKENBELL_DATA), or start the server once to make it`);
  }
  const { storage } = await openBackend({ dataFile, databaseUrl, databasePoolSize: 2, migrate: false }).catch((error: unknown) => {
    if (!(error instanceof StoreLockedError)) throw error;
    throw new StoreLockedError(`${error.message}; a data file's keys change only while no server runs on it`);
  });
  try {
    const rotation = await rotateSigningKey(storage, Math.floor(Date.now() / 1000), { dropRetired: values['drop-retired'] === true });
    print(rotationReport(rotation, databaseUrl === null));
  } finally {
    await storage.maintenance.close();
  }
}

/** One line saying what changed and when it takes effect. */
function rotationReport({ kid, signsFrom, retiredKid, droppedKids }: Rotation, onDataFile: boolean): string {
  const where = onDataFile ? 'on the server from its next start' : 'on every instance on the database, without a restart';
  const dropped = droppedKids.length === 0 ? '' : `; ${droppedKids.join(', ')} dropped: unpublished, what they signed no longer verifies`;
  if (retiredKid === null || droppedKids.includes(retiredKid)) return `new signing key ${kid}, signing now${dropped}; ${where}`;
  const at = new Date(signsFrom * 1000).toISOString();
  return `new signing key ${kid}, published now and signing from ${at}; ${retiredKid} signs until then, then stays published for a day${dropped}; ${where}`;
}
