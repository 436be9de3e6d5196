// The contract suite's seed: the example fixture (packages/server/fixtures/example-seed.json), which the server's own
// tests share, plus one public application (registered as not confidential: no App Secret, client_id alone at the
// token and revocation endpoints, PKCE required), so that the suite can exercise the `none` client authentication,
// and one administrator, the only user the test-helper area (`test_helpers`) answers, both without changing what the
// fixture's other users see.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { exampleSeedPath as exampleSeed } from '../../scripts/lib/paths.js';

/** The public application the contract seed adds, owned by jsmith. */
export const publicApplication = {
  name: 'Contract Browser App',
  clientId: 'contract-public-client-000000000000',
  redirectUri: 'http://127.0.0.1:8080/spa/callback',
} as const;

/**
 * The administrator the contract seed adds (`is_admin`), a member of nothing, with a personal access token of scope
 * api; a read_api token comes from the password grant (setup.token) when a case needs one.
 */
export const administrator = {
  username: 'root',
  password: 'contract-suite-administrator',
  pat: 'tbpat-root-contract-token-0000000000000000000',
} as const;

/** Writes the contract seed into `dir` and answers its path. */
export async function writeContractSeed(dir: string): Promise<string> {
  const fixture = JSON.parse(await readFile(exampleSeed, 'utf8')) as { users?: unknown[]; applications?: unknown[] };
  fixture.users = [
    ...(fixture.users ?? []),
    {
      username: administrator.username,
      email: 'root@example.com',
      name: 'Administrator',
      password: administrator.password,
      is_admin: true,
      personal_access_tokens: [{ name: 'contract', token: administrator.pat, scopes: ['api'] }],
    },
  ];
  fixture.applications = [
    ...(fixture.applications ?? []),
    {
      name: publicApplication.name,
      owner: 'jsmith',
      client_id: publicApplication.clientId,
      redirect_uris: [publicApplication.redirectUri],
      scopes: ['api', 'read_api', 'read_user'],
      confidential: false,
    },
  ];
  const path = join(dir, 'contract-seed.json');
  await writeFile(path, `${JSON.stringify(fixture, null, 2)}\n`);
  return path;
}
