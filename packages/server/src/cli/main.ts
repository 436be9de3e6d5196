// `tokenbell`, the package's bin and `npm start` (through index.ts): the first argument names the command; without a
// name the arguments are the server's (`tokenbell --port 4000`), which is what most people run.
import { fail, print, type Print } from './output.js';

type Command = (args: string[], env: NodeJS.ProcessEnv, print: Print) => Promise<void>;

// Each loaded only when named: a server on the data file never loads the PostgreSQL driver that migrate needs, and a
// command run from a shell does not wait for the server's modules.
const commands = new Map<string, () => Promise<Command>>([
  ['users', async () => (await import('./users.js')).runUsersCommand],
  ['migrate', async () => (await import('./migrate.js')).runMigrateCommand],
  ['keys', async () => (await import('./keys.js')).runKeysCommand],
  ['events', async () => (await import('./events.js')).runEventsCommand],
  ['test-helpers', async () => (await import('./test-helpers.js')).runTestHelpersCommand],
  ['hash-password', async () => (await import('./hash-password.js')).runHashPasswordCommand],
]);

async function main(args: string[]): Promise<void> {
  const named = commands.get(args[0] ?? '');
  if (named) return (await named())(args.slice(1), process.env, print);
  // Asked among the server's flags, and answered without loading the server: a start's worth of modules otherwise.
  if (args.includes('--help') || args.includes('-h')) return void process.stdout.write((await import('../config.js')).usage);
  if (args.includes('--version')) return void print((await import('../version.js')).version);
  await (await import('./serve.js')).runServeCommand(args, process.env);
}

main(process.argv.slice(2)).catch(fail);
