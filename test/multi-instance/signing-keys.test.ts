// The id_token signing keys of two tokenbell processes on one PostgreSQL database: started together on a database
// without a key, they race to make the first one, and both publish the one that won; `tokenbell keys rotate` run
// while both serve makes both publish the new key first and the old one beside it, without a restart, both still
// signing with the old one until the handover the database records, then both with the new; `keys rotate
// --drop-retired` makes both sign with a new key at once and publish nothing else. An id_token issued by one instance
// verifies with the keys the other serves throughout.
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { spawnProcess } from '../../scripts/lib/processes.js';
import { loadSeed } from '../../packages/server/src/domain/seed/load.js';
import { postgresStorage } from '../../packages/server/src/store/postgres/storage.js';
import { cliPath, repoRoot, startCli, stopCli, type CliProcess } from '../../packages/server/test/hardening/support.js';
import { freshMigratedDatabase } from '../support/postgres.js';

let database: { url: string; drop(): Promise<void> };
let pool: pg.Pool;
const instances: CliProcess[] = [];

beforeAll(async () => {
  database = await freshMigratedDatabase(inject('postgresUrl'));
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
  // A user already there, so that neither instance makes the demo data: this test is about the race for the key.
  await loadSeed(postgresStorage(pool), {
    users: [{ username: 'ops', email: 'ops@example.com', name: 'Ops', password: 'a long enough password' }],
    applications: [{ name: 'Sign-in', owner: 'ops', client_id: client.id, client_secret: client.secret, redirect_uris: ['https://app.example.com/cb'], scopes: ['openid', 'email'] }],
  });
  const common = ['--database-url', database.url, '--log-level', 'warn'];
  instances.push(...(await Promise.all([startCli(common, 60_000), startCli(common, 60_000)])));
}, 120_000);

afterAll(async () => {
  for (const instance of instances) await stopCli(instance);
  await pool?.end();
  await database?.drop();
});

const client = { id: 'multi-instance-oidc-client-0000000', secret: 'tbcs_multi-instance-oidc-secret-000000000000' };

/** An id_token from the instance's password grant for ops, through the OIDC application. */
async function idTokenFrom(instance: CliProcess): Promise<string> {
  const response = await fetch(`${instance.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', username: 'ops', password: 'a long enough password', scope: 'openid email', client_id: client.id, client_secret: client.secret }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { id_token: string }).id_token;
}

/**
 * Verifies an id_token `issuer` made with the JWK set `verifier` serves (each instance is its own issuer, by its base
 * URL; the keys are what they share); answers the kid it was signed with.
 */
async function verified(idToken: string, issuer: CliProcess, verifier: CliProcess): Promise<string> {
  const keys = createLocalJWKSet(await (await fetch(`${verifier.baseUrl}/oauth/discovery/keys`)).json());
  const { payload } = await jwtVerify(idToken, keys, { issuer: issuer.baseUrl, audience: client.id, algorithms: ['RS256'] });
  expect(payload.email).toBe('ops@example.com');
  return decodeProtectedHeader(idToken).kid!;
}

const publishedKids = async (instance: CliProcess) => {
  const response = await fetch(`${instance.baseUrl}/oauth/discovery/keys`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { keys: Array<{ kid: string }> }).keys.map((k) => k.kid);
};

describe('signing keys on two instances of one database', () => {
  it('publish the one first key both raced to make at start', async () => {
    const [first, second] = await Promise.all(instances.map(publishedKids));
    expect(first).toHaveLength(1);
    expect(second).toEqual(first);
    const { rows } = await pool.query<{ kid: string; newest: boolean }>('SELECT kid, retired_at IS NULL AS newest FROM signing_keys');
    expect(rows).toEqual([{ kid: first![0], newest: true }]);
  });

  it('both publish a rotation made while they run, the new key first and the old one still there, without a restart; both sign with the new key from the handover on; id_tokens of either verify with the other\'s keys throughout', { timeout: 60_000 }, async () => {
    const [before] = await publishedKids(instances[0]!);
    const [a, b] = instances as [CliProcess, CliProcess];
    const early = await idTokenFrom(a);
    expect(await verified(early, a, b)).toBe(before);
    const rotate = await keysRotate([]);
    expect(rotate).toEqual({ code: 0, output: expect.stringContaining(`; ${before} signs until then, then stays published for a day;`) });
    const [, rotated] = /^new signing key ([\w-]{43}),/.exec(rotate.output)!;

    for (const instance of instances) expect(await publishedKids(instance)).toEqual([rotated, before]);
    // Published, not signing yet: a verifier that cached the set before the rotation verifies what either signs now.
    expect(await verified(await idTokenFrom(b), b, a)).toBe(before);
    expect(await verified(early, a, b)).toBe(before);
    // The handover, as if its ten minutes had passed: both processes' clocks go on, so the database's timeline moves back.
    await pool.query(`UPDATE signing_keys SET signs_from = signs_from - interval '1 hour' WHERE kid = $1`, [rotated]);
    await pool.query(`UPDATE signing_keys SET retired_at = retired_at - interval '1 hour' WHERE kid = $1`, [before]);
    for (const [issuer, verifier] of [[b, a], [a, b]] as const) expect(await verified(await idTokenFrom(issuer), issuer, verifier)).toBe(rotated);
    expect(await verified(early, a, b)).toBe(before);
    // Still the same processes: nothing restarted.
    for (const instance of instances) expect(instance.child.exitCode).toBeNull();
  });

  it('both sign with the new key at once after a rotation that drops the retired keys, and publish nothing else', { timeout: 60_000 }, async () => {
    const [a, b] = instances as [CliProcess, CliProcess];
    const old = await idTokenFrom(a);
    const dropped = await keysRotate(['--drop-retired']);
    expect(dropped).toEqual({ code: 0, output: expect.stringMatching(/^new signing key [\w-]{43}, signing now; .* dropped: unpublished, what they signed no longer verifies;/) });
    const [, clean] = /^new signing key ([\w-]{43}),/.exec(dropped.output)!;
    for (const instance of instances) expect(await publishedKids(instance)).toEqual([clean]);
    expect(await verified(await idTokenFrom(b), b, a)).toBe(clean);
    await expect(verified(old, a, b)).rejects.toThrow(/no applicable key found/);
  });
});

/** `tokenbell keys rotate` on the instances' database, as an operator runs it beside them. */
async function keysRotate(args: string[]): Promise<{ code: number | null; output: string }> {
  const rotate = spawnProcess(process.execPath, [cliPath, 'keys', 'rotate', ...args, '--database-url', database.url], { cwd: repoRoot, env: { NODE_ENV: 'production' } });
  const { code } = await Promise.race([rotate.exited, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`keys rotate did not end within 30 s:\n${rotate.output()}`)), 30_000))]);
  return { code, output: rotate.output() };
}
