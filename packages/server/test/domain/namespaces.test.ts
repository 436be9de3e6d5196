// Groups and projects: the rules for a new one and adding it, on an in-memory store.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newUserRow } from '../../src/domain/accounts.js';
import { checkNamespaceEntryFields, presentProject } from '../../src/domain/namespaces.js';
import { openStore, type Store } from '../../src/store/file/store.js';
import { fileStorage } from '../../src/store/file/storage.js';
import type { Storage } from '../../src/domain/storage/index.js';

let store: Store;
let storage: Storage;
beforeEach(async () => {
  store = await openStore({ file: null });
  storage = fileStorage(store);
  await storage.users.create(newUserRow({ username: 'jsmith', email: 'jsmith@example.com', name: 'Jane Smith' }, 'scrypt$x'));
});
afterEach(() => store.close());

/** 2026-11-01T09:30:00Z */
const at = 1793525400;

describe('checkNamespaceEntryFields', () => {
  it.each([
    [{ path: '.hidden', name: 'x', visibility: 'private' }, 'path'],
    [{ path: 'ok', name: '  ', visibility: 'private' }, 'name'],
    [{ path: 'ok', name: 'x'.repeat(256), visibility: 'private' }, 'name'],
    [{ path: 'ok', name: 'x', visibility: 'secret' }, 'visibility'],
  ])('refuses %j, naming %s', (entry, field) => {
    expect(() => checkNamespaceEntryFields(entry)).toThrow(expect.objectContaining({ field }));
  });
});

describe('creating groups and projects (the file store; test/store/namespaces.test.ts has every store)', () => {
  it('adds a group and a project in it, and one in a personal namespace', async () => {
    const group = await storage.namespaces.createGroup({ path: 'acme', name: 'Acme', visibility: 'private', created_at: at }, []);
    expect(group).toMatchObject({ path: 'acme', name: 'Acme' });
    const project = await storage.namespaces.createProject({ namespace: 'ACME', path: 'widgets', name: 'Widgets', visibility: 'internal', created_at: at }, []);
    expect(project).toMatchObject({ namespace: 'acme', group_id: group.id });
    const personal = await storage.namespaces.createProject({ namespace: 'jsmith', path: 'dotfiles', name: 'dotfiles', visibility: 'private', created_at: at }, []);
    expect(await presentProject(storage, personal, 'http://127.0.0.1:3000')).toMatchObject({ path_with_namespace: 'jsmith/dotfiles', namespace: { kind: 'user', name: 'Jane Smith' } });
  });

  it('refuses a taken path, a username as a group path and an unknown namespace, changing nothing', async () => {
    await storage.namespaces.createGroup({ path: 'acme', name: 'Acme', visibility: 'private', created_at: at }, []);
    const before = JSON.stringify(store.data);
    await expect(storage.namespaces.createGroup({ path: 'ACME', name: 'Again', visibility: 'private', created_at: at }, [])).rejects.toMatchObject({ field: 'path', code: 'taken' });
    await expect(storage.namespaces.createGroup({ path: 'jsmith', name: 'J', visibility: 'private', created_at: at }, [])).rejects.toMatchObject({ field: 'path', code: 'taken' });
    await expect(storage.namespaces.createProject({ namespace: 'nobody', path: 'p', name: 'P', visibility: 'private', created_at: at }, [])).rejects.toMatchObject({ field: 'namespace', code: 'unknown' });
    expect(JSON.stringify(store.data)).toBe(before);
  });
});
