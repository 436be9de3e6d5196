// `tokenbell [options]`, the command without a name: open the store, seed it, and serve until SIGINT or SIGTERM.
import { createServer } from 'node:http';
import { type Config, configFrom, configWarnings, limits } from '../config.js';
import { findApplicationByUid } from '../domain/applications.js';
import { logTransport, smtpTransport, startMailDelivery } from '../domain/mail-delivery.js';
import { cheapHashing } from '../domain/passwords.js';
import { signingKey } from '../domain/oidc/signing-keys.js';
import type { TestKit } from '../domain/testing/test-kit.js';
import { ExplainedError } from '../explained-error.js';
import { createApp } from '../http/app.js';
import { GracefulStop } from '../http/shutdown.js';
import { requestLogger } from '../http/request-log.js';
import { requestValidation, warmedUpValidator } from '../http/validation.js';
import type { DemoCredentials } from '../domain/seed/demo.js';
import { openBackend } from '../store/backend.js';
import type { Logger } from 'pino';
import { fail } from './output.js';
import { referenceOAuthRedirectPath } from '../pages/reference-paths.js';
import type { Storage } from '../domain/storage/index.js';
import { ConfigError, InputError } from '../explained-error.js';

/** The server's flags (`--help` and `--version` are answered by main.ts before this module loads). */
export async function runServeCommand(args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  await serve(configFrom(args, env));
}

/** Opens the store (seeding it if asked), listens, then greets, prunes and waits for a signal to stop. */
async function serve(config: Config): Promise<void> {
  // Made first, so that every line of the start is a log line in the chosen format that a shipper can read; only a
  // start that fails says why on standard error (output.ts), and the demo's credentials go there too, never the log.
  const requestLog = requestLogger({ level: config.logLevel, format: config.logFormat });
  // --log-level says how much of the request log to keep; the server's own life-cycle lines (seed loaded, listening,
  // shutting down) stay at any level but silent: they are how an operator, or a script, knows the server is up.
  const logger = config.logLevel === 'silent' ? requestLog.logger : requestLog.logger.child({}, { level: 'info' });
  const backend = await openBackend(config);
  const { storage } = backend;
  // The store's first signing key, made at the first start rather than by the first id_token's request. Its key pair is
  // made off the main thread while the seed's passwords are hashed and the server starts listening: only an id_token
  // or the JWK set needs it, and a request for one meanwhile waits for this same key (signing-keys.ts). Marked handled
  // at once: a failure is thrown below, before the server says it is listening.
  const keyMade = signingKey(storage, Math.floor(Date.now() / 1000));
  keyMade.catch(() => undefined);
  // The seed's, the demo's and the test helpers' modules load only for a start that uses them.
  if (config.seedFile) {
    const { loadSeedFile } = await import('../domain/seed/load.js');
    // In memory, a seed's hashes live as long as the process, beside the seed file that holds the passwords in plain
    // text: the kit's cheap parameters (about 1 ms a password instead of 50) protect nothing less, and a password that
    // signs in is rehashed with production's, as on any server. On a file or a database they are production's.
    const inMemory = config.dataFile === null && config.databaseUrl === null;
    const loaded = await loadSeedFile(storage, config.seedFile, inMemory ? { hashing: cheapHashing } : {});
    logger.info({ seed: config.seedFile, loaded, passwordHashing: inMemory ? 'cheap' : 'production' }, `loaded seed ${config.seedFile}`);
  }
  for (const warning of configWarnings(config)) logger.warn(warning);
  for (const id of config.introspectionClients) {
    if (!(await findApplicationByUid(storage, id))) logger.warn(`--introspection-clients names "${id}", which is not the App ID of any application here (yet)`);
  }
  const validation = config.validateResponses ? await warmedUpValidator({ testHelpers: config.testHelpers }) : requestValidation({ validateResponses: false });
  const testKit = config.testHelpers ? await startTestKit(storage, logger) : undefined;
  // Every instance delivers; on a database they share the outbox, and each message is claimed by one of them.
  const mailTransport = config.smtpUrl ? smtpTransport(config.smtpUrl, config.mailFrom) : logTransport((line) => requestLog.logger.info(line));
  const mailDelivery = startMailDelivery(storage.mail, mailTransport, testKit ? { now: testKit.clock.now } : {});
  const stopping = new AbortController();
  const app = createApp({ backend, config, validation, requestLog, mailDelivery, testKit, stopping: stopping.signal, log: (message, id) => logger.error({ req: { id } }, message) });
  // With the demo account or the test helpers' administrator still to make once listening (below), a request that
  // arrives meanwhile waits for them: a suite that starts calling as soon as the port answers must not meet a
  // test-helper area whose token does not exist yet. Otherwise nothing waits: the first key has its own wait.
  let greeted: (() => void) | undefined;
  let pending = config.demo || testKit ? new Promise<void>((resolve) => (greeted = resolve)) : undefined;
  const server = createServer((req, res) => (pending ? void pending.then(() => app(req, res)) : app(req, res)));
  server.listen(config.port, config.host);
  const graceful = new GracefulStop(server);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  await keyMade;
  // Only now, with the server really listening: credentials printed for a server that failed to start would be lost,
  // since the store keeps only their digests.
  // The API reference's own redirect page too, so that its "Authorize" button works on a fresh instance.
  const demo = config.demo ? await (await import('../domain/seed/demo.js')).ensureDemoData(storage, config.baseUrl, [`${config.baseUrl}${referenceOAuthRedirectPath}`]) : null;
  if (demo) {
    process.stderr.write(`${demoGreeting(demo, config.baseUrl)}\n`);
    logger.info({ demo: { username: demo.username, client_id: demo.client_id } }, 'created the demo account, group, project and application (their credentials went to standard error, once)');
  }
  if (testKit) await greetTestHelpers(storage, config, logger);
  await testKit?.markSeeded();
  pending = undefined;
  greeted?.();
  const where = { url: config.baseUrl, data: storage.maintenance.describe(), mail: describeSmtp(config.smtpUrl) };
  logger.info(where, `tokenbell listening on ${where.url} (data: ${where.data}; mail: ${where.mail}); API reference: ${where.url}/help/api`);
  // On a database one instance prunes at a time; the others find it busy and skip their turn.
  const pruning = setInterval(() => void storage.maintenance.prune(Math.floor(Date.now() / 1000)).catch(() => undefined), limits.pruneIntervalSeconds * 1000);
  pruning.unref();
  stopOnSignal(async () => {
    stopping.abort();
    clearInterval(pruning);
    // A message being sent finishes and is recorded; what is still queued waits in the store for the next start.
    const [cut] = await Promise.all([graceful.stop(config.shutdownTimeout * 1000), mailDelivery.stop()]);
    if (cut > 0) logger.warn({ cut }, `cut ${cut} request(s) still running after --shutdown-timeout ${config.shutdownTimeout}`);
    return storage.maintenance.close().catch((error: unknown) => {
      // Nothing acknowledged is lost: the journal still holds it, and the next start replays it.
      throw new ExplainedError(`could not close ${storage.maintenance.describe()} cleanly: ${(error as Error).message}; the next start will replay the journal`);
    });
  }, logger);
}

async function startTestKit(storage: Storage, logger: Logger): Promise<TestKit> {
  const { TestKit, testHelpersWarning } = await import('../domain/testing/test-kit.js');
  logger.warn({ testHelpers: true }, testHelpersWarning);
  return new TestKit(storage);
}

/**
 * The administrator's token a suite calls the test-helper area with: the one given, or a new one on standard error
 * (a secret: never in the log), so that a suite in any language needs no seed to begin. Part of the seeded state, so
 * a reset keeps it.
 */
async function greetTestHelpers(storage: Storage, config: Config, logger: Logger): Promise<void> {
  const given = config.testHelpersToken ?? undefined;
  const { testHelpersAdministratorToken } = await import('../domain/testing/administrator.js');
  let token: string;
  try {
    token = await testHelpersAdministratorToken(storage, { ...(given === undefined ? {} : { token: given }), who: given === undefined ? '--test-helpers' : '--test-helpers-token', tokenName: 'test helpers' });
  } catch (error) {
    if (error instanceof InputError) throw new ConfigError(`--test-helpers-token (TOKENBELL_TEST_HELPERS_TOKEN) ${error.message}`);
    throw error;
  }
  if (given !== undefined) return void logger.info({ testHelpers: { token: 'given' } }, 'test helpers: the administrator root answers to the token of --test-helpers-token');
  process.stderr.write(`The test-helper area's administrator token (PRIVATE-TOKEN; shown only this once, or set --test-helpers-token):\n  ${token}\n`);
  logger.info({ testHelpers: { token: 'made' } }, "test helpers: made the administrator root's token (written to standard error, once)");
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

/** On the first SIGINT or SIGTERM: `stop`, then exit 0, or 1 with its error explained as any command's; a second signal changes nothing. */
function stopOnSignal(stop: () => Promise<void>, logger: Logger): void {
  let stopping = false;
  const onSignal = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, `${signal}: shutting down`);
    stop().then(() => {
      // The last line, once every request has been answered and the store closed; written out before the exit.
      logger.info('stopped');
      logger.flush(() => process.exit(0));
    }, fail);
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
}
