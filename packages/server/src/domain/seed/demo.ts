// The demo data a fresh store starts with, so that `npm start` serves something to sign in with.
import { customAlphabet } from 'nanoid';
import { scopes } from '../../openapi/document.js';
import { newClientId, newSecret } from '../secrets.js';
import type { Storage } from '../storage/index.js';
import type { SeedFixture } from './fixture.js';
import { loadSeed } from './load.js';

export interface DemoCredentials {
  username: string;
  password: string;
  client_id: string;
  client_secret: string;
  redirect_uri: string;
  group: string;
  project: string;
}

/** The built-in page the demo application's redirect URI points at. */
export const demoCallbackPath = '/demo/callback';

const demoPassword = customAlphabet('23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz', 16);

/**
 * Gives an empty store something to sign in with: user `demo`, group `demo-group`, project
 * `demo-group/demo-project` and the application "Demo App". Answers the plain credentials (printed once by the
 * CLI; the store keeps only hashes), or null when the store already has users. `alsoRedirectTo` adds redirect URIs
 * to the demo application (the server passes its API reference's own).
 */
export async function ensureDemoData(storage: Storage, baseUrl: string, alsoRedirectTo: readonly string[] = []): Promise<DemoCredentials | null> {
  if (await storage.users.any()) return null;
  const credentials: DemoCredentials = {
    username: 'demo',
    password: demoPassword(),
    client_id: newClientId(),
    client_secret: newSecret('clientSecret'),
    // The server's own callback page, which shows the code and how to exchange it: the first authorization ends there.
    redirect_uri: `${baseUrl}${demoCallbackPath}`,
    group: 'demo-group',
    project: 'demo-group/demo-project',
  };
  const fixture: SeedFixture = {
    users: [{ username: 'demo', email: 'demo@example.com', name: 'Demo User', password: credentials.password }],
    groups: [{ path: 'demo-group', name: 'Demo Group', visibility: 'private', members: [{ username: 'demo', access_level: 50 }] }],
    projects: [{ namespace: 'demo-group', path: 'demo-project', name: 'Demo Project', visibility: 'private' }],
    applications: [
      {
        name: 'Demo App',
        owner: 'demo',
        client_id: credentials.client_id,
        client_secret: credentials.client_secret,
        redirect_uris: [credentials.redirect_uri, ...alsoRedirectTo],
        // Every scope of the catalogue, OpenID Connect's and the Git scopes too, so that a client configured for
        // gitlab.com (or the API reference's "select all") signs in against a fresh instance with what it asks for.
        scopes: [...scopes],
      },
    ],
  };
  await loadSeed(storage, fixture);
  return credentials;
}
