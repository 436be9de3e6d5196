import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { appendFile, copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { DurableJsonFile } from '../../../src/store/file/durable-json-file.js';
import {
  notificationSettingKey,
  pruneStore,
  readDurableData,
  StoreClosedError,
  StoreCorruptError,
  StoreLockedError,
  StoreVersionError,
  type Store,
} from '../../../src/store/file/store.js';
import { Journal, journalFileOf } from '../../../src/store/file/journal.js';
import { SCHEMA_VERSION, type StoreData } from '../../../src/store/file/schema.js';
import { type AccessTokenRecord, type UserRecord } from '../../../src/domain/storage/records.js';
import { useTempStores } from '../temp-store.js';

const t = useTempStores();

/** The JSON file alone, as a person or a backup tool would see it. */
function readJson(file: string): StoreData {
  return JSON.parse(readFileSync(file, 'utf8')) as StoreData;
}

function user(id: number, username: string, email = `${username}@example.com`): UserRecord {
  return {
    id,
    username,
    email,
    secondary_emails: [],
    name: username,
    password_hash: 'scrypt$16384$8$1$AAAA$AAAA',
    two_factor_enabled: false,
    state: 'active',
    is_admin: false,
    bio: '',
    created_at: 1767225600,
  };
}

function accessToken(id: string, fields: Partial<AccessTokenRecord>): AccessTokenRecord {
  return {
    id,
    token_digest: `t-${id}`,
    refresh_digest: null,
    application_id: null,
    user_id: 1,
    scopes: ['api'],
    created_at: 0,
    expires_in: 7200,
    revoked_at: null,
    code_id: null,
    ...fields,
  };
}

function writes(store: Store): number {
  return store.stats.fileWrites;
}

describe('opening', () => {
  it('creates a missing file (and its directory) with fresh data', async () => {
    const file = join(t.dir(), 'nested', 'deeper', 'data.json');
    const store = await t.open(file);
    const onDisk = readJson(file);
    expect(onDisk.version).toBe(SCHEMA_VERSION);
    expect(Buffer.from(onDisk.secrets.session_key, 'base64url')).toHaveLength(32);
    expect(onDisk.sequences).toEqual({ users: 0, groups: 0, projects: 0, applications: 0, personal_access_tokens: 0 });
    expect(onDisk.users).toEqual([]);
    expect(onDisk.sessions).toEqual([]);
    expect(store.data).toEqual(onDisk);
  });

  it('gives every new store its own session key', async () => {
    const a = await t.open(t.file('a.json'));
    const b = await t.open(t.file('b.json'));
    expect(a.data.secrets.session_key).not.toBe(b.data.secrets.session_key);
  });

  it('reads back what an earlier store committed, indexes included', async () => {
    const file = t.file();
    const first = await t.open(file);
    await first.commit(() => first.insert('users', user(first.nextId('users'), 'Alice')));
    await first.close();

    const second = await t.open(file);
    expect(second.data.sequences.users).toBe(1);
    expect(second.lookup('users', 'username', 'alice')?.id).toBe(1);
    expect(second.data.secrets.session_key).toBe(first.data.secrets.session_key);
  });

  it('refuses a file that does not parse, names it and leaves it byte for byte', async () => {
    const file = t.file();
    const bytes = Buffer.from('{"version":1,"users":[', 'utf8');
    await writeFile(file, bytes);
    const opening = t.open(file);
    await expect(opening).rejects.toBeInstanceOf(StoreCorruptError);
    await expect(opening).rejects.toThrow(file);
    expect((await readFile(file)).equals(bytes)).toBe(true);
    // The failed open released its lock, so nothing is left behind.
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it('refuses an empty file rather than starting afresh over it', async () => {
    const file = t.file();
    await writeFile(file, '');
    await expect(t.open(file)).rejects.toBeInstanceOf(StoreCorruptError);
    expect(await readFile(file, 'utf8')).toBe('');
  });

  it('refuses JSON that is not a store', async () => {
    const file = t.file();
    await writeFile(file, JSON.stringify({ version: SCHEMA_VERSION, secrets: { session_key: 'k' } }));
    await expect(t.open(file)).rejects.toThrow(/sequences/);
  });

  it('refuses an unreadable path and names it', async () => {
    // A directory where the file should be: reading fails with EISDIR.
    const file = t.file('a-directory.json');
    await mkdir(file);
    const opening = t.open(file);
    await expect(opening).rejects.toBeInstanceOf(StoreCorruptError);
    await expect(opening).rejects.toThrow(file);
  });

  it('refuses another schema version and leaves the file alone', async () => {
    const file = t.file();
    const text = JSON.stringify({ version: SCHEMA_VERSION + 1, users: [] });
    await writeFile(file, text);
    const opening = t.open(file);
    await expect(opening).rejects.toBeInstanceOf(StoreVersionError);
    await expect(opening).rejects.toThrow(file);
    expect(await readFile(file, 'utf8')).toBe(text);
  });
});

describe('one writer per file', () => {
  it('refuses a second store on a locked file, naming the file and the owner', async () => {
    const file = t.file();
    await t.open(file);
    const second = t.open(file);
    await expect(second).rejects.toBeInstanceOf(StoreLockedError);
    await expect(second).rejects.toThrow(file);
    await expect(second).rejects.toThrow(String(process.pid));
  });

  it('releases the lock on close', async () => {
    const file = t.file();
    const first = await t.open(file);
    expect(readFileSync(`${file}.lock`, 'utf8').trim()).toBe(String(process.pid));
    await first.close();
    expect(existsSync(`${file}.lock`)).toBe(false);
    // A second store takes the file over: it can write, and a third one reads what it wrote.
    const second = await t.open(file);
    await second.commit(() => second.insert('users', user(second.nextId('users'), 'Bob')));
    await second.close();
    const third = await t.open(file);
    expect(third.lookup('users', 'username', 'bob')?.name).toBe('Bob');
  });

  it('takes over a lock left by a process that is gone', async () => {
    const file = t.file();
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    expect(gone).toBeGreaterThan(0);
    await writeFile(`${file}.lock`, `${gone}\n`);
    const store = await t.open(file);
    expect(readFileSync(`${file}.lock`, 'utf8').trim()).toBe(String(process.pid));
    await store.commit(() => store.nextId('users'));
    expect((await readDurableData(file)).sequences.users).toBe(1);
  });
});

describe('commit', () => {
  it('resolves only once the change is durable, and what is on disk always reads', async () => {
    const file = t.file();
    const store = await t.open(file);
    const seen: boolean[] = [];
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        store
          .commit(() => store.insert('sessions', { sid_digest: `s${i}`, session: {}, expires_at: 1 }))
          .then(async () => seen.push((await readDurableData(file)).sessions.some((s) => s.sid_digest === `s${i}`))),
      ),
    );
    expect(seen).toEqual(Array(20).fill(true));
  });

  it('lands 200 concurrent commits with far fewer file writes', async () => {
    const file = t.file();
    const store = await t.open(file);
    const before = writes(store);
    const commits: Promise<number>[] = [];
    for (let i = 0; i < 200; i++) {
      commits.push(store.commit(() => store.nextId('users')));
      store.commit(() => store.insert('sessions', { sid_digest: `sid-${i}`, session: { i }, expires_at: 1 }));
      // Spread over many ticks, so commits also arrive while a write is in flight.
      if (i % 10 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    const ids = await Promise.all(commits);
    await store.flush();
    expect(ids).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    const onDisk = await readDurableData(file);
    expect(onDisk.sequences.users).toBe(200);
    expect(new Set(onDisk.sessions.map((s) => s.sid_digest)).size).toBe(200);
    const written = writes(store) - before;
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThan(400 / 4);
  });

  it('writes nothing when mutate throws, and passes the error on', async () => {
    const file = t.file();
    const store = await t.open(file);
    await store.commit(() => store.nextId('groups'));
    const bytes = Buffer.concat([await readFile(file), await readFile(journalFileOf(file))]);
    const before = writes(store);
    await expect(
      store.commit(() => {
        throw new Error('invalid input');
      }),
    ).rejects.toThrow('invalid input');
    await store.flush();
    expect(writes(store)).toBe(before);
    expect(Buffer.concat([await readFile(file), await readFile(journalFileOf(file))]).equals(bytes)).toBe(true);
  });

  it('leaves no temporary files behind', async () => {
    const store = await t.open(t.file());
    await Promise.all(Array.from({ length: 30 }, () => store.commit(() => store.nextId('projects'))));
    expect((await readdir(t.dir())).sort()).toEqual(['data.json', 'data.json.journal', 'data.json.lock']);
  });

  it('close waits for writes still pending', async () => {
    const file = t.file();
    const store = await t.open(file);
    const committed = store.commit(() => store.insert('users', user(store.nextId('users'), 'late')));
    await store.close();
    await committed;
    expect(readJson(file).users.map((u) => u.username)).toEqual(['late']);
    await expect(store.commit(() => 1)).rejects.toBeInstanceOf(StoreClosedError);
  });

  it('updates the right record in place among inserts and removes, and a reopened store reads the same', async () => {
    // Against a plain model: updates find their record through a position table that inserts keep and removes drop.
    const file = t.file();
    const store = await t.open(file);
    const model: UserRecord[] = [];
    let seed = 7;
    const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let step = 0; step < 600; step++) {
      const choice = random(10);
      if (choice < 4 || model.length === 0) {
        const record = await store.commit(() => store.insert('users', user(store.nextId('users'), `user${step}`)));
        model.push(record);
      } else if (choice < 8) {
        const i = random(model.length);
        model[i] = await store.commit(() => store.update('users', model[i]!, { name: `renamed at ${step}` }));
      } else {
        const gone = model.splice(random(model.length), 1)[0]!;
        await store.commit(() => store.remove('users', (u) => u.id === gone.id));
      }
      if (step % 50 === 0) expect(store.data.users).toEqual(model);
    }
    expect(store.data.users).toEqual(model);
    for (const record of model) expect(store.lookup('users', 'username', record.username)).toEqual(record);
    await store.close();
    expect((await t.open(file)).data.users).toEqual(model);
  });

  it('in memory: no file at all', async () => {
    const write = vi.spyOn(DurableJsonFile.prototype, 'write');
    try {
      const store = await t.open(null);
      expect(store.file).toBeNull();
      expect(await store.commit(() => store.nextId('users'))).toBe(1);
      expect(store.data.sequences.users).toBe(1);
      expect(write).not.toHaveBeenCalled();
      expect(await readdir(t.dir())).toEqual([]);
    } finally {
      write.mockRestore();
    }
  });
});

/** What a crash would leave: the data file and journal as they are on disk now, copied to `name`. */
async function crashCopy(file: string, name: string): Promise<string> {
  const copy = join(file, '..', name);
  await copyFile(file, copy);
  await copyFile(journalFileOf(file), journalFileOf(copy));
  return copy;
}

const plain = (data: StoreData) => JSON.parse(JSON.stringify(data)) as StoreData;
/** The stored state, without the journal generation (which each compaction moves on). */
const state = (data: StoreData) => ({ ...plain(data), journal: undefined });

describe('journal', () => {
  it('answers commits from journal appends, and folds the journal into the JSON file on close', async () => {
    const file = t.file();
    const store = await t.open(file);
    const alice = await store.commit(() => store.insert('users', user(store.nextId('users'), 'alice')));
    await store.commit(() => store.update('users', alice, { bio: 'written later' }));
    // The JSON file is still the snapshot taken when the store opened; the journal holds the rest.
    expect(readJson(file).users).toEqual([]);
    expect((await Journal.read(journalFileOf(file)))!.ops.map(([kind]) => kind)).toEqual(['sequence', 'insert', 'update']);
    expect((await readDurableData(file)).users).toEqual([{ ...alice, bio: 'written later' }]);

    await store.close();
    expect(readJson(file).users).toEqual([{ ...alice, bio: 'written later' }]);
    expect((await Journal.read(journalFileOf(file)))!.ops).toEqual([]);
  });

  it('after a crash, replays the journal on open and folds it into the JSON file', async () => {
    const file = t.file();
    const store = await t.open(file);
    await store.commit(() => {
      for (const name of ['alice', 'bob', 'carol']) store.insert('users', user(store.nextId('users'), name));
      store.insert('access_tokens', accessToken('a', { user_id: 1 }));
      store.insert('access_tokens', accessToken('b', { user_id: 2 }));
    });
    await store.commit(() => {
      store.update('access_tokens', store.lookup('access_tokens', 'id', 'a')!, { revoked_at: 5 });
      store.remove('access_tokens', (token) => token.id === 'b');
      store.remove('users', (u) => u.username === 'bob');
    });
    const copy = await crashCopy(file, 'crashed.json');

    const reopened = await t.open(copy);
    expect(state(reopened.data)).toEqual(state(store.data));
    expect(reopened.lookup('access_tokens', 'token_digest', 't-a')?.revoked_at).toBe(5);
    expect(reopened.lookup('users', 'username', 'bob')).toBeUndefined();
    expect(state(readJson(copy))).toEqual(state(store.data));
    expect((await Journal.read(journalFileOf(copy)))!.ops).toEqual([]);
  });

  it('drops a last line whose append never finished, and nothing else', async () => {
    const file = t.file();
    const store = await t.open(file);
    await store.commit(() => store.insert('users', user(store.nextId('users'), 'alice')));
    const copy = await crashCopy(file, 'torn.json');
    await appendFile(journalFileOf(copy), '[["sequence","users",99],["insert","users",{"id":99,');

    const reopened = await t.open(copy);
    expect(state(reopened.data)).toEqual(state(store.data));
    // The journal was rewritten, so the next append does not land after the torn bytes.
    expect((await readFile(journalFileOf(copy), 'utf8')).endsWith('\n')).toBe(true);
  });

  it('refuses a damaged journal line, naming the journal, and changes neither file', async () => {
    const file = t.file();
    const store = await t.open(file);
    await store.commit(() => store.nextId('users'));
    await store.commit(() => store.nextId('groups'));
    const copy = await crashCopy(file, 'damaged.json');
    const journal = (await readFile(journalFileOf(copy), 'utf8')).split('\n');
    journal[1] = journal[1]!.slice(0, -3);
    await writeFile(journalFileOf(copy), journal.join('\n'));
    const before = [await readFile(copy), await readFile(journalFileOf(copy))];

    const opening = t.open(copy);
    await expect(opening).rejects.toBeInstanceOf(StoreCorruptError);
    await expect(opening).rejects.toThrow(`${journalFileOf(copy)} has a damaged line 2`);
    expect([await readFile(copy), await readFile(journalFileOf(copy))]).toEqual(before);
    expect(existsSync(`${copy}.lock`)).toBe(false);
  });

  it('refuses an operation that does not fit the data file, and changes neither file', async () => {
    const file = t.file();
    const store = await t.open(file);
    await store.commit(() => store.nextId('users'));
    const copy = await crashCopy(file, 'misfit.json');
    await appendFile(journalFileOf(copy), `${JSON.stringify([['update', 'users', 42, { bio: 'x' }]])}\n`);
    const before = [await readFile(copy), await readFile(journalFileOf(copy))];

    await expect(t.open(copy)).rejects.toThrow(/operation 2 cannot be applied \(users 42 is not in the store\)/);
    expect([await readFile(copy), await readFile(journalFileOf(copy))]).toEqual(before);
  });

  it('ignores a journal the JSON file already holds (a crash between the two steps of a compaction)', async () => {
    const file = t.file();
    const store = await t.open(file);
    await store.commit(() => store.insert('users', user(store.nextId('users'), 'alice')));
    const oldJournal = await readFile(journalFileOf(file));
    await store.close();
    await writeFile(journalFileOf(file), oldJournal);

    const reopened = await t.open(file);
    expect(reopened.data.users.map((u) => u.username)).toEqual(['alice']);
    expect(reopened.data.sequences.users).toBe(1);
  });

  it('refuses a journal newer than the JSON file (an older data file restored over a running store)', async () => {
    const file = t.file();
    const store = await t.open(file);
    const oldFile = await readFile(file);
    await store.commit(() => store.nextId('users'));
    await store.close();
    await writeFile(file, oldFile);
    await appendFile(journalFileOf(file), `${JSON.stringify([['sequence', 'users', 2]])}\n`);

    const opening = t.open(file);
    await expect(opening).rejects.toBeInstanceOf(StoreCorruptError);
    await expect(opening).rejects.toThrow(/is newer than the data file/);
    expect(await readFile(file)).toEqual(oldFile);
  });

  it('compacts once the journal outgrows the JSON file, and loses nothing doing it', async () => {
    const file = t.file();
    const store = await t.open(file, { minCompactionBytes: 0 });
    const opened = store.stats.compactions;
    for (let i = 0; i < 50; i++) await store.commit(() => store.insert('sessions', { sid_digest: `s${i}`, session: { i }, expires_at: 1 }));
    expect(store.stats.compactions - opened).toBeGreaterThan(2);
    expect(store.stats.compactions - opened).toBeLessThan(25);
    expect(readJson(file).sessions.length).toBeGreaterThan(10);
    expect(await readDurableData(file)).toEqual(plain(store.data));
  });

  it('a commit that changes nothing writes nothing', async () => {
    const store = await t.open(t.file());
    const before = writes(store);
    expect(await store.commit(() => store.lookup('users', 'id', 1))).toBeUndefined();
    expect(writes(store)).toBe(before);
  });

  it('reads users written before secondary e-mail addresses existed, in the file and in its journal, as having none', async () => {
    const file = t.file();
    const store = await t.open(file);
    await store.commit(() => store.nextId('users'));
    await store.close();
    const older = (record: UserRecord) => {
      const { secondary_emails: _, ...rest } = record;
      return rest;
    };
    const data = readJson(file);
    await writeFile(file, JSON.stringify({ ...data, users: [older(user(1, 'alice'))] }));
    await writeFile(journalFileOf(file), `${JSON.stringify({ journal: data.journal })}\n${JSON.stringify([['insert', 'users', older(user(2, 'bob'))]])}\n`);
    const reopened = await t.open(file);
    expect(reopened.data.users).toEqual([user(1, 'alice'), user(2, 'bob')]);
    expect(reopened.lookup('users', 'address', 'BOB@example.com')?.id).toBe(2);
    await reopened.close();
    expect(readJson(file).users).toEqual([user(1, 'alice'), user(2, 'bob')]);
  });

  it('reads signing keys written before the next state, in the file and in its journal, as signing from their making', async () => {
    const file = t.file();
    const store = await t.open(file);
    await store.commit(() => store.nextId('users'));
    await store.close();
    const older = (kid: string, createdAt: number, retiredAt: number | null) => ({ kid, private_key: 'pem', public_jwk: { kty: 'RSA' as const, n: 'n', e: 'AQAB' }, created_at: createdAt, retired_at: retiredAt });
    const data = readJson(file);
    await writeFile(file, JSON.stringify({ ...data, signing_keys: [older('kid-old', 100, 200)] }));
    await writeFile(journalFileOf(file), `${JSON.stringify({ journal: data.journal })}\n${JSON.stringify([['insert', 'signing_keys', older('kid-new', 200, null)]])}\n`);
    const reopened = await t.open(file);
    expect(reopened.data.signing_keys).toEqual([
      { ...older('kid-old', 100, 200), signs_from: 100 },
      { ...older('kid-new', 200, null), signs_from: 200 },
    ]);
    await reopened.close();
  });

  it('reads a file written before signing keys existed as having none, and writes them once there are some', async () => {
    const file = t.file();
    const store = await t.open(file);
    await store.commit(() => store.insert('users', user(1, 'alice')));
    await store.close();
    const { signing_keys: _none, ...older } = readJson(file);
    await writeFile(file, JSON.stringify(older));
    const reopened = await t.open(file);
    expect(reopened.data.signing_keys).toEqual([]);
    expect(reopened.data.users).toEqual([user(1, 'alice')]);
    const key = { kid: 'kid-1', private_key: 'pem', public_jwk: { kty: 'RSA' as const, n: 'n', e: 'AQAB' }, created_at: 1, signs_from: 1, retired_at: null };
    await reopened.commit(() => reopened.insert('signing_keys', key));
    await reopened.close();
    expect(readJson(file).signing_keys).toEqual([key]);
  });

  it('reads a file written before device authorizations existed as having none, and writes the collection from then on', async () => {
    const file = t.file();
    const store = await t.open(file);
    await store.commit(() => store.nextId('users'));
    await store.close();
    const { device_grants: _, ...older } = readJson(file);
    await writeFile(file, JSON.stringify(older));
    const reopened = await t.open(file);
    expect(reopened.data.device_grants).toEqual([]);
    // The next write folds the collection into the file.
    await reopened.commit(() => reopened.nextId('users'));
    await reopened.close();
    expect(readJson(file).device_grants).toEqual([]);
  });

  it('reads a version 1 file (before the journal) and writes it as the current version', async () => {
    const file = t.file();
    const v1 = { ...plain((await t.open(null)).data), version: 1 } as Record<string, unknown>;
    delete v1.journal;
    await writeFile(file, JSON.stringify(v1));
    const store = await t.open(file);
    expect(store.data.version).toBe(SCHEMA_VERSION);
    expect(readJson(file)).toMatchObject({ version: SCHEMA_VERSION, journal: 1 });
  });

  it('reads a version 2 file and its journal (camelCase fields, ISO times, sessions in milliseconds) as version 3, and writes it so', async () => {
    const file = t.file();
    const v2 = {
      version: 2,
      journal: 4,
      secrets: { sessionKey: 'key-of-version-2' },
      sequences: { users: 1, groups: 0, projects: 0, applications: 0, personalAccessTokens: 1 },
      users: [{ id: 1, username: 'alice', email: 'alice@example.com', name: 'Alice', passwordHash: 'scrypt$x', two_factor_enabled: true, otpSecret: 'KRUGKIDROVUWG2ZAMJZG653OEBTG66BA', otpLastStep: 7, state: 'active', is_admin: false, bio: '', created_at: '2026-01-01T00:00:00.000Z' }],
      groups: [],
      projects: [],
      applications: [],
      personalAccessTokens: [{ id: 1, user_id: 1, name: 'laptop', tokenDigest: 'pat-digest', scopes: ['api'], created_at: '2026-01-02T00:00:00.000Z', expires_at: '2030-12-31', revoked: false }],
      authorizationCodes: [],
      accessTokens: [],
      notificationSettings: [],
      sessions: [{ sid: 'sid-digest', session: { userId: 1 }, expires: 1_767_225_600_500 }],
    };
    await writeFile(file, JSON.stringify(v2));
    // The journal continues the version 2 snapshot, in version 2's names.
    const ops = [
      ['update', 'users', 1, { passwordHash: 'scrypt$new' }],
      ['insert', 'accessTokens', { id: 't1', tokenDigest: 'at-digest', refreshDigest: 'rt-digest', application_id: null, user_id: 1, scopes: ['api'], created_at: 1_767_225_600, expires_in: 7200, revoked_at: null, code_id: null }],
      ['sequence', 'personalAccessTokens', 2],
      ['update', 'sessions', 'sid-digest', { expires: 1_767_229_200_000 }],
    ];
    await writeFile(journalFileOf(file), `${JSON.stringify({ journal: 4 })}\n${JSON.stringify(ops)}\n`);
    const store = await t.open(file);
    expect(store.data.version).toBe(3);
    expect(store.data.secrets).toEqual({ session_key: 'key-of-version-2' });
    expect(store.data.sequences.personal_access_tokens).toBe(2);
    expect(store.lookup('users', 'username', 'alice')).toMatchObject({ password_hash: 'scrypt$new', otp_secret: 'KRUGKIDROVUWG2ZAMJZG653OEBTG66BA', otp_last_step: 7, created_at: 1_767_225_600 });
    expect(store.lookup('personal_access_tokens', 'token_digest', 'pat-digest')).toMatchObject({ created_at: 1_767_312_000, expires_at: '2030-12-31' });
    expect(store.lookup('access_tokens', 'refresh_digest', 'rt-digest')).toMatchObject({ id: 't1', token_digest: 'at-digest' });
    expect(store.lookup('sessions', 'sid_digest', 'sid-digest')).toEqual({ sid_digest: 'sid-digest', session: { userId: 1 }, expires_at: 1_767_229_200 });
    // Written at once as version 3, with nothing of version 2 left in the file.
    const onDisk = readJson(file) as unknown as Record<string, unknown>;
    expect(onDisk.version).toBe(3);
    expect(JSON.stringify(onDisk)).not.toMatch(/passwordHash|tokenDigest|personalAccessTokens|sessionKey|"sid"|"expires"/);
    await store.close();
    expect((await t.open(file)).lookup('users', 'id', 1)?.password_hash).toBe('scrypt$new');
  });
});

describe('records', () => {
  it('are frozen: a change made outside the store (which the journal would miss) throws', async () => {
    const store = await t.open(null);
    const alice = await store.commit(() => store.insert('users', user(1, 'alice')));
    expect(() => {
      (alice as { bio: string }).bio = 'sneaky';
    }).toThrow(TypeError);
    expect(() => {
      (store.data.users[0]!.created_at as unknown) = 'x';
    }).toThrow(TypeError);
  });

  it('update answers a new version found by the primary key, re-indexed, and refuses to change an indexed field', async () => {
    const store = await t.open(null);
    const alice = await store.commit(() => store.insert('users', user(1, 'alice')));
    const blocked = await store.commit(() => store.update('users', alice, { state: 'blocked', bio: undefined }));
    expect(blocked).toEqual({ ...alice, state: 'blocked' });
    expect(store.lookup('users', 'username', 'ALICE')).toBe(blocked);
    expect(store.lookup('users', 'email', 'alice@example.com')).toBe(blocked);
    expect(store.data.users).toEqual([blocked]);
    // An older copy still names the record; the patch applies to the stored version.
    const renamed = await store.commit(() => store.update('users', alice, { name: 'Alice' }));
    expect(renamed).toMatchObject({ state: 'blocked', name: 'Alice' });
    await expect(store.commit(() => store.update('users', alice, { username: 'mallory' }))).rejects.toThrow('users.username cannot change');
    expect(store.lookup('users', 'username', 'mallory')).toBeUndefined();
  });
});

describe('indexes', () => {
  it('find inserted records by every indexed field, case-insensitively where names are', async () => {
    const store = await t.open(null);
    await store.commit(() => {
      store.insert('users', user(7, 'JSmith', 'Jane.Smith@Example.com'));
      store.insert('groups', { id: 3, path: 'Acme', name: 'Acme', visibility: 'private', members: [], created_at: 0 });
      store.insert('projects', {
        id: 4,
        namespace: 'Acme',
        path: 'Widgets',
        name: 'Widgets',
        visibility: 'private',
        group_id: 3,
        members: [],
        created_at: 0,
      });
      store.insert('notification_settings', {
        user_id: 7,
        source_type: 'group',
        source_id: 3,
        level: 'watch',
        notification_email: null,
        events: {} as never,
      });
      store.insert('access_tokens', accessToken('a1', { refresh_digest: 'r1' }));
      store.insert('access_tokens', accessToken('a2', {}));
    });
    expect(store.lookup('users', 'id', 7)?.username).toBe('JSmith');
    expect(store.lookup('users', 'id', '7')?.username).toBe('JSmith');
    expect(store.lookup('users', 'username', 'jsmith')?.id).toBe(7);
    expect(store.lookup('users', 'email', 'JANE.SMITH@example.COM')?.id).toBe(7);
    expect(store.lookup('groups', 'path', 'ACME')?.id).toBe(3);
    expect(store.lookup('projects', 'fullPath', 'acme/widgets')?.id).toBe(4);
    expect(store.lookup('notification_settings', 'key', notificationSettingKey(7, 'group', 3))?.level).toBe('watch');
    expect(store.lookup('notification_settings', 'key', notificationSettingKey(7, 'global', null))).toBeUndefined();
    expect(store.lookup('access_tokens', 'refresh_digest', 'r1')?.id).toBe('a1');
    expect(store.lookup('access_tokens', 'token_digest', 't-a2')?.id).toBe('a2');
    expect(store.lookup('users', 'username', 'nobody')).toBeUndefined();
  });

  it('forget removed records', async () => {
    const store = await t.open(null);
    await store.commit(() => {
      store.insert('users', user(1, 'keep'));
      store.insert('users', user(2, 'drop'));
    });
    const removed = await store.commit(() => store.remove('users', (u) => u.username === 'drop'));
    expect(removed.map((u) => u.id)).toEqual([2]);
    expect(store.data.users.map((u) => u.id)).toEqual([1]);
    expect(store.lookup('users', 'id', 2)).toBeUndefined();
    expect(store.lookup('users', 'email', 'drop@example.com')).toBeUndefined();
    expect(store.lookup('users', 'id', 1)?.username).toBe('keep');
    // The name is free again.
    await store.commit(() => store.insert('users', user(3, 'DROP')));
    expect(store.lookup('users', 'username', 'drop')?.id).toBe(3);
  });

  it('refuse a duplicate key without changing anything', async () => {
    const store = await t.open(null);
    await store.commit(() => store.insert('users', user(1, 'alice')));
    expect(() => store.insert('users', user(2, 'ALICE', 'other@example.com'))).toThrow(/username/);
    expect(store.data.users).toHaveLength(1);
    expect(store.lookup('users', 'id', 2)).toBeUndefined();
    expect(store.lookup('users', 'email', 'other@example.com')).toBeUndefined();
  });

  it("find a user by any address they own, primary or secondary, and refuse one that is anyone's already or listed twice", async () => {
    const store = await t.open(null);
    const jane = await store.commit(() => store.insert('users', { ...user(1, 'jane'), secondary_emails: ['Jane@Work.example', 'j@home.example'] }));
    expect(store.lookup('users', 'address', 'JANE@work.example')).toBe(jane);
    expect(store.lookup('users', 'address', 'jane@EXAMPLE.com')).toBe(jane);
    // `email` is the primary address alone: it is the one sign-in reads.
    expect(store.lookup('users', 'email', 'jane@work.example')).toBeUndefined();
    expect(() => store.insert('users', user(2, 'bob', 'J@Home.example'))).toThrow('users.address "j@home.example" already exists');
    expect(() => store.insert('users', { ...user(2, 'bob'), secondary_emails: ['jane@example.com'] })).toThrow(/users\.address/);
    expect(() => store.insert('users', { ...user(2, 'bob'), secondary_emails: ['b@example.org', 'B@example.org'] })).toThrow('users.address "b@example.org" already exists');
    expect(store.data.users).toEqual([jane]);
    expect(store.lookup('users', 'address', 'b@example.org')).toBeUndefined();
    const blocked = await store.commit(() => store.update('users', jane, { state: 'blocked' }));
    expect(store.lookup('users', 'address', 'j@home.example')).toBe(blocked);
    await expect(store.commit(() => store.update('users', jane, { secondary_emails: [] }))).rejects.toThrow('users.address cannot change');
    await store.commit(() => store.remove('users', (u) => u.id === 1));
    expect(store.lookup('users', 'address', 'j@home.example')).toBeUndefined();
  });

  it('refuse a data file whose records collide', async () => {
    const file = t.file();
    const store = await t.open(file);
    await store.commit(() => store.insert('users', user(1, 'alice')));
    await store.close();
    const data = readJson(file);
    data.users.push(user(1, 'bob'));
    await writeFile(file, JSON.stringify(data));
    await expect(t.open(file)).rejects.toBeInstanceOf(StoreCorruptError);
  });
});

describe('prune', () => {
  it('drops only what can never be used again', async () => {
    const now = 1_000_000;
    const day = 86_400;
    const store = await t.open(null);
    const code = (id: string, expires_at: number) => ({
      id,
      code_digest: id,
      application_id: 1,
      user_id: 1,
      redirect_uri: 'http://127.0.0.1/cb',
      scopes: ['api' as const],
      code_challenge: null,
      code_challenge_method: null,
      created_at: expires_at - 600,
      expires_at,
      used_at: null,
    });
    await store.commit(() => {
      store.insert('authorization_codes', code('old-code', now - day - 1));
      store.insert('authorization_codes', code('recent-code', now - day + 1));
      // Revoked long ago: the refresh token died with it.
      store.insert('access_tokens', accessToken('revoked-old', { refresh_digest: 'r1', revoked_at: now - day - 1 }));
      store.insert('access_tokens', accessToken('revoked-recent', { revoked_at: now - 10 }));
      // Expired long ago, no refresh token.
      store.insert('access_tokens', accessToken('expired-old', { created_at: now - 2 * day, expires_in: 60 }));
      // Expired long ago, but its refresh token still works.
      store.insert('access_tokens', accessToken('refreshable', { refresh_digest: 'r2', created_at: now - 30 * day, expires_in: 60 }));
      store.insert('access_tokens', accessToken('live', { created_at: now, expires_in: 7200 }));
      store.insert('sessions', { sid_digest: 'expired', session: {}, expires_at: now - 1 });
      store.insert('sessions', { sid_digest: 'live', session: {}, expires_at: now + 60 });
    });
    const result = await pruneStore(store, now);
    expect(result).toEqual({ authorizationCodes: 1, deviceGrants: 0, accessTokens: 2, sessions: 1, notificationMessages: 0 });
    expect(store.data.authorization_codes.map((c) => c.id)).toEqual(['recent-code']);
    expect(store.data.access_tokens.map((a) => a.id)).toEqual(['revoked-recent', 'refreshable', 'live']);
    expect(store.data.sessions.map((s) => s.sid_digest)).toEqual(['live']);
    expect(store.lookup('access_tokens', 'refresh_digest', 'r1')).toBeUndefined();
    expect(store.lookup('authorization_codes', 'code_digest', 'old-code')).toBeUndefined();
    expect(store.lookup('sessions', 'sid_digest', 'expired')).toBeUndefined();
  });
});
