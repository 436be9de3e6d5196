// Every command and subcommand answers --help with its usage, whatever else is on the line, and opens nothing; a bad
// database URL is named by where it came from, the flag or DATABASE_URL.
import { describe, expect, it } from 'vitest';
import { eventsUsage, runEventsCommand } from '../../src/cli/events.js';
import { hashPasswordUsage, runHashPasswordCommand } from '../../src/cli/hash-password.js';
import { keysUsage, runKeysCommand } from '../../src/cli/keys.js';
import { migrateUsage, runMigrateCommand } from '../../src/cli/migrate.js';
import { runUsersCommand, usersUsage } from '../../src/cli/users.js';
import { ConfigError } from '../../src/explained-error.js';

type Command = (args: string[], env: NodeJS.ProcessEnv, print: (line: string) => void) => Promise<void>;
const printed = async (command: Command, args: string[], env: NodeJS.ProcessEnv = {}) => {
  const lines: string[] = [];
  await command(args, env, (line) => lines.push(line));
  return lines;
};

describe('--help on a subcommand', () => {
  it.each([
    [runUsersCommand, ['create', '--help'], usersUsage],
    [runUsersCommand, ['create', '--username', 'x', '-h'], usersUsage],
    [runUsersCommand, ['reset-password', '--help'], usersUsage],
    [runUsersCommand, ['token', '--help'], usersUsage],
    [runEventsCommand, ['emit', '--help'], eventsUsage],
    [runEventsCommand, ['messages', '--help'], eventsUsage],
    [runKeysCommand, ['rotate', '--help'], keysUsage],
    [runMigrateCommand, ['--help'], migrateUsage],
    [runHashPasswordCommand, ['--help'], hashPasswordUsage],
    [runHashPasswordCommand, ['-h'], hashPasswordUsage],
  ] as Array<[Command, string[], string]>)('%#: prints the usage and does nothing else', async (command, args, usage) => {
    // A database nobody could reach: were the command to run, it would fail rather than print.
    expect(await printed(command, args, { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', TOKENBELL_DATA: '/nonexistent/bell.json' })).toEqual([usage]);
  });
});

describe('a malformed database URL', () => {
  it.each([
    [runUsersCommand, ['create', '--username', 'u']],
    [runKeysCommand, ['rotate']],
    [runMigrateCommand, []],
  ] as Array<[Command, string[]]>)('%#: is named as DATABASE_URL or --database-url, without its password', async (command, args) => {
    const url = 'postgres://bell:hun@ter2@db.example.com/bell';
    const fromEnv = printed(command, args, { DATABASE_URL: url });
    await expect(fromEnv).rejects.toThrow(ConfigError);
    await expect(fromEnv).rejects.toThrow(/^DATABASE_URL has more than one @ before its host/);
    const fromFlag = await printed(command, [...args, '--database-url', url], {}).catch((error: Error) => error.message);
    expect(fromFlag).toMatch(/^--database-url has more than one @ before its host/);
    expect(fromFlag).not.toMatch(/hun|ter2/);
  });
});
