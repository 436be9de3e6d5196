// `@tokenbell/server/testing`: a whole tokenbell inside a test run. It starts in-process on a free loopback port, on
// its own store (memory unless a data file is named), seeded from an object or a file (its passwords hashed with cheap
// scrypt parameters unless asked otherwise: passwordHashing), with the test-helper area on; several in one process
// share nothing. The helpers are the area's operations, called in-process; a suite that would rather go through HTTP
// (or runs in another process) uses the URL and the administrator's token with the SDK's `@tokenbell/sdk/test-helpers`.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { configFrom, type Config } from './config.js';
import { logTransport, smtpTransport, startMailDelivery } from './domain/mail-delivery.js';
import { testHelpers } from './domain/testing/helpers.js';
import { TestKit } from './domain/testing/test-kit.js';
import { testHelpersAdministratorToken } from './domain/testing/administrator.js';
import { signIn, type SignInOptions } from '@tokenbell/sdk/test-helpers';
import type { TokenResponse } from '@tokenbell/sdk';
import { createApp } from './http/app.js';
import { inProcessHelpers } from './http/in-process-helpers.js';
import { requestValidation } from './http/validation.js';
import { openBackend } from './store/backend.js';
import { loadSeed, loadSeedFile } from './domain/seed/load.js';
import { cheapHashing, productionHashing } from './domain/passwords.js';
import { type SeedFixture } from './domain/seed/fixture.js';
import type { Storage } from './domain/storage/index.js';
import type { TokenbellTestHelpers } from '@tokenbell/sdk/test-helpers';

export type { SeedFixture } from './domain/seed/fixture.js';

/**
 * The test-helper area's operations, in-process: the same interface as the SDK's client of the area over HTTP
 * (`createTokenbellTestHelpers`), so a suite moves between the two without changing a line. Named by the SDK's
 * interface rather than by the server's own implementation, so that this entry's declarations do not reach into the
 * server's storage (and whatever a store's declarations import).
 */
export type TestHelpers = TokenbellTestHelpers;

/**
 * One request validation per process and setting, shared by every instance started here: with --validate-responses
 * the validator loads the document and compiles each operation's checks on first use, so a suite that starts an
 * instance per file pays for that once (instances share no state through it, only compiled schemas).
 */
const validators = new Map<boolean, ReturnType<typeof requestValidation>>();
const validatorFor = (validateResponses: boolean) => {
  let chain = validators.get(validateResponses);
  if (!chain) validators.set(validateResponses, (chain = requestValidation({ validateResponses })));
  return chain;
};

export interface StartTokenbellOptions {
  /** The state to start from, and to go back to on reset: a seed fixture, or the path of its JSON file. */
  seed?: SeedFixture | string;
  /** A JSON data file to keep the state in; memory when not given. */
  dataFile?: string;
  /** 0 (any free port) when not given. */
  port?: number;
  /**
   * The administrator whose personal access token `adminToken` is: a username of the seed, who must be an
   * administrator. When not given, the seed's first administrator, or else a user `root` added as one, as the
   * service's own installations have.
   */
  admin?: string;
  /** Settings as the server's flags take them (`--token-ttl 60` is `{ tokenTtl: 60 }`). */
  config?: Partial<Pick<Config, 'tokenTtl' | 'codeTtl' | 'passwordGrant' | 'sessionLifetime' | 'introspectionClients' | 'validateResponses'>>;
  /** Where notification mail goes (an smtp:// URL); nowhere when not given (each message is marked sent). */
  smtpUrl?: string;
  /**
   * What the seed's passwords are hashed with, and those of the `root` added when the seed has no administrator and of
   * the users `helpers.createUser` adds (in-process or over HTTP). `'cheap'`, the default: scrypt with N=1024 (r=8,
   * p=1), about 1 ms a password instead of about 50 ms, so a suite starting an instance per file does not spend its
   * starts hashing; fine for throwaway passwords, not for real ones. `'production'`: the server's own parameters
   * (N=16384), when a test measures or relies on them. Either way a password that signs in (the sign-in form, the
   * password grant) is rehashed with the production parameters, as on any server, and a seed's `password_hash` is
   * kept as given. The running instance says which in `passwordHashing`.
   */
  passwordHashing?: PasswordHashing;
}

/** How a test instance hashes the passwords it seeds (StartTokenbellOptions.passwordHashing). */
export type PasswordHashing = 'cheap' | 'production';

export interface RunningTokenbell {
  /** The base URL, e.g. http://127.0.0.1:41234: the issuer, and where the API and the pages are. */
  url: string;
  /** A personal access token (scope `api`) of the administrator, for the test-helper area over HTTP; part of the seeded state, so a reset keeps it. */
  adminToken: string;
  /** The test-helper area's operations, in-process. */
  helpers: TestHelpers;
  /** How the seed's (and createUser's) passwords are hashed: `'cheap'` (scrypt N=1024) unless `passwordHashing: 'production'` was asked. */
  passwordHashing: PasswordHashing;
  /**
   * A user signed in to an application as its login code would be, without a browser: the authorization request
   * with PKCE and state, approved as the user, and the code exchanged at the token endpoint over HTTP. The redirect
   * URI is the application's first when not given; a confidential application needs its `clientSecret`.
   */
  signIn(options: Omit<SignInOptions, 'baseUrl' | 'redirectUri' | 'fetch'> & { redirectUri?: string }): Promise<TokenResponse>;
  /** Stops listening, ends open connections and lets go of the store. */
  close(): Promise<void>;
}

export async function startTokenbell(options: StartTokenbellOptions = {}): Promise<RunningTokenbell> {
  const backend = await openBackend({ dataFile: options.dataFile ?? null, databaseUrl: null, databasePoolSize: 1, migrate: false });
  const { storage } = backend;
  const server = createServer();
  try {
    const passwordHashing = options.passwordHashing ?? 'cheap';
    const hashing = passwordHashing === 'production' ? productionHashing : cheapHashing;
    if (typeof options.seed === 'string') await loadSeedFile(storage, options.seed, { hashing });
    else if (options.seed) await loadSeed(storage, options.seed, { hashing });
    const seedAdmin = typeof options.seed === 'object' ? options.seed.users?.find((user) => user.is_admin)?.username : undefined;
    const admin = options.admin ?? seedAdmin;
    const adminToken = await testHelpersAdministratorToken(storage, { ...(admin === undefined ? {} : { admin }), who: 'startTokenbell: admin', tokenName: 'startTokenbell', hashing });
    // The base URL names the port, so the port is taken before the application is made.
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', resolve);
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const config: Config = { ...configFrom(['--base-url', url], {}), ...options.config, testHelpers: true };
    const kit = new TestKit(storage, undefined, hashing);
    const mailDelivery = startMailDelivery(storage.mail, options.smtpUrl ? smtpTransport(options.smtpUrl, config.mailFrom) : logTransport(() => undefined), { now: kit.clock.now });
    server.on('request', createApp({ backend, config, testKit: kit, mailDelivery, validation: validatorFor(config.validateResponses) }));
    await kit.markSeeded();
    const openId = { idTokenTtl: config.idTokenTtl, instanceSecret: backend.sessionSecret };
    const helpers: TestHelpers = inProcessHelpers(testHelpers({ storage, kit, baseUrl: url, codeTtl: config.codeTtl, tokenTtl: config.tokenTtl, openId, onMailQueued: () => mailDelivery.kick() }));
    return {
      url,
      adminToken,
      helpers,
      passwordHashing,
      async signIn(options) {
        const registered = (await storage.applications.byUid(options.clientId))?.redirect_uris[0];
        // An unknown application has no redirect URI: the authorization step refuses its client_id first.
        return signIn(helpers, { ...options, baseUrl: url, redirectUri: options.redirectUri ?? registered ?? 'http://127.0.0.1/' });
      },
      async close() {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await mailDelivery.stop();
        await storage.maintenance.close();
      },
    };
  } catch (error) {
    server.close();
    await storage.maintenance.close();
    throw error;
  }
}
