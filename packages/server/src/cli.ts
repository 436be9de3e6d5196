#!/usr/bin/env node
// `tokenbell` / `npm start`: open the store, seed it, and serve until SIGINT or SIGTERM.
import { createRequire } from 'node:module';
import { type Config, configFrom, configWarnings, limits, usage } from './config.js';
import { runUsersCommand } from './admin.js';
import { runEventsCommand } from './events-command.js';
import { ExplainedError } from './explained-error.js';
import { createApp } from './http/app.js';
import { requestLogger } from './http/operations.js';
import { openApiValidation, warmUpValidation } from './http/openapi-validation.js';
import { findApplicationByUid } from './domain/applications.js';
import { type DemoCredentials, ensureDemoData } from './domain/seed/demo.js';
import { loadSeedFile } from './domain/seed/load.js';
import { openBackend } from './store/backend.js';
import { logTransport, smtpTransport, startMailDelivery } from './domain/mail-delivery.js';
import { TestKit, testHelpersWarning } from './domain/testing/test-kit.js';

// package.json sits one level above both src/cli.ts and dist/cli.js.
const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const print = (line: string) => void process.stdout.write(`${line}\n`);
  if (args[0] === 'users') return runUsersCommand(args.slice(1), process.env, print);
  if (args[0] === 'events') return runEventsCommand(args.slice(1), process.env, print);
  if (args[0] === 'test-helpers') return (await import('./test-helpers-command.js')).runTestHelpersCommand(args.slice(1), process.env, print);
  if (args[0] === 'migrate') {
    // Loaded only here, so that a server on the JSON file never loads the PostgreSQL driver.
    const { runMigrateCommand } = await import('./migrate-command.js');
    return runMigrateCommand(args.slice(1), process.env, print);
  }
  if (args.includes('--help') || args.includes('-h')) return void process.stdout.write(usage);
  if (args.includes('--version')) return print(version);
  await serve(configFrom(args));
}

/** Opens the store (seeding it if asked), listens, then greets, prunes and waits for a signal to stop. */
async function serve(config: Config): Promise<void> {
  const backend = await openBackend(config);
  const { storage } = backend;
  if (config.seedFile) {
    await loadSeedFile(storage, config.seedFile);
    console.log(`Loaded seed ${config.seedFile}`);
  }
  for (const warning of configWarnings(config)) console.warn(`tokenbell: ${warning}`);
  for (const id of config.introspectionClients) {
    if (!(await findApplicationByUid(storage, id))) console.warn(`tokenbell: --introspection-clients names "${id}", which is not the App ID of any application here (yet)`);
  }
  // The first request would otherwise wait for the document to load and its own checks to compile.
  const validation = openApiValidation({ validateResponses: config.validateResponses });
  await warmUpValidation(validation, { testHelpers: config.testHelpers });
  // One JSON line per request; readable lines instead when a person watches the terminal.
  const requestLog = requestLogger({ level: config.logLevel, pretty: process.stdout.isTTY === true });
  if (config.testHelpers) console.warn(`tokenbell: ${testHelpersWarning}`);
  const testKit = config.testHelpers ? new TestKit(storage) : undefined;
  // Every instance delivers; on a database they share the outbox, and each message is claimed by one of them.
  const mailTransport = config.smtpUrl ? smtpTransport(config.smtpUrl, config.mailFrom) : logTransport((line) => requestLog.logger.info(line));
  const mailDelivery = startMailDelivery(storage.mail, mailTransport, testKit ? { now: testKit.clock.now } : {});
  const app = createApp({ backend, config, validation, requestLog, mailDelivery, testKit, log: (message) => requestLog.logger.error(message) });
  const server = app.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  // Only now, with the server really listening: credentials printed for a server that failed to start would be lost,
  // since the store keeps only their digests.
  const demo = await ensureDemoData(storage, config.baseUrl);
  if (demo) console.log(demoGreeting(demo, config.baseUrl));
  await testKit?.markSeeded();
  console.log(`tokenbell listening on ${config.baseUrl} (data: ${storage.maintenance.describe()}; mail: ${describeSmtp(config.smtpUrl)}); API reference: ${config.baseUrl}/help/api`);
  // On a database one instance prunes at a time; the others find it busy and skip their turn.
  const pruning = setInterval(() => void storage.maintenance.prune(Math.floor(Date.now() / 1000)).catch(() => undefined), limits.pruneIntervalSeconds * 1000);
  pruning.unref();
  stopOnSignal(async () => {
    clearInterval(pruning);
    server.close();
    server.closeAllConnections();
    // A message being sent finishes and is recorded; what is still queued waits in the store for the next start.
    await mailDelivery.stop();
    return storage.maintenance.close().catch((error: unknown) => {
      // Nothing acknowledged is lost: the journal still holds it, and the next start replays it.
      throw new Error(`could not close ${storage.maintenance.describe()} cleanly: ${(error as Error).message}; the next start will replay the journal`);
    });
  });
}

/** The SMTP server without its credentials, or where mail goes without one. */
function describeSmtp(url: string | null): string {
  if (url === null) return 'to the log (no --smtp-url)';
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}`;
}

function demoGreeting(demo: DemoCredentials, baseUrl: string): string {
  return [
    'Created a demo account, group, project and application (shown only this once):',
    `  sign in:        ${baseUrl}/users/sign_in  as ${demo.username} / ${demo.password}`,
    `  group:          ${demo.group}`,
    `  project:        ${demo.project}`,
    `  client_id:      ${demo.client_id}`,
    `  client_secret:  ${demo.client_secret}`,
    `  redirect_uri:   ${demo.redirect_uri}`,
  ].join('\n');
}

/** On the first SIGINT or SIGTERM: `stop`, then exit 0, or 1 with its error's message. */
function stopOnSignal(stop: () => Promise<void>): void {
  let stopping = false;
  const onSignal = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: shutting down`);
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error((error as Error).message);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
}

function explain(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') return `${error.message.replace(/^listen /, '')}: another process is listening there; choose another --port`;
  if (code === 'EADDRNOTAVAIL') return `${error.message.replace(/^listen /, '')}: --host names no address of this machine; use one of its own (127.0.0.1, ::1, or 0.0.0.0 for all)`;
  if (code === 'ENOTFOUND') return `--host ${(error as NodeJS.ErrnoException & { hostname?: string }).hostname ?? ''}: no such host name; use an address or a name this machine resolves`;
  if (code?.startsWith('ERR_PARSE_ARGS')) return `${error.message}\n\n${usage}`;
  if (code === 'EACCES') return `${error.message}: not allowed to listen there`;
  // Our own errors say what is wrong in their message; anything else is a bug worth its stack.
  return error instanceof ExplainedError ? error.message : (error.stack ?? error.message);
}

main().catch((error: unknown) => {
  console.error(`tokenbell: ${explain(error)}`);
  process.exit(1);
});
