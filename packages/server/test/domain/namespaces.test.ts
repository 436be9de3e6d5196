// Groups and projects: the rules for a new one and adding it, on an in-memory store.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { insertUser } from '../../src/domain/accounts.js';
import { checkNamespaceEntryFields, insertGroup, insertProject, presentProject } from '../../src/domain/namespaces.js';
import { openStore, type Store } from '../../src/store/file-store.js';

let store: Store;
beforeEach(async () => {
  store = await openStore({ file: null });
  await store.commit(() => insertUser(store, { username: 'jsmith', email: 'jsmith@example.com', name: 'Jane Smith' }, 'scrypt$x'));
});
afterEach(() => store.close());

const at = '2026-11-01T09:30:00.000Z';

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

describe('insertGroup and insertProject', () => {
  it('adds a group and a project in it, and one in a personal namespace', async () => {
    const group = await store.commit(() => insertGroup(store, { path: 'acme', name: ' Acme ', visibility: 'private' }, [], at));
    expect(group).toMatchObject({ path: 'acme', name: 'Acme' });
    const project = await store.commit(() => insertProject(store, 'ACME', { path: 'widgets', name: 'Widgets', visibility: 'internal' }, [], at));
    expect(project).toMatchObject({ namespace: 'acme', group_id: group.id });
    const personal = await store.commit(() => insertProject(store, 'jsmith', { path: 'dotfiles', name: 'dotfiles', visibility: 'private' }, [], at));
    expect(presentProject(store, personal, 'http://127.0.0.1:3000')).toMatchObject({ path_with_namespace: 'jsmith/dotfiles', namespace: { kind: 'user', name: 'Jane Smith' } });
  });

  it('refuses a taken path, a username as a group path and an unknown namespace, changing nothing', async () => {
    await store.commit(() => insertGroup(store, { path: 'acme', name: 'Acme', visibility: 'private' }, [], at));
    const before = JSON.stringify(store.data);
    await expect(store.commit(() => insertGroup(store, { path: 'ACME', name: 'Again', visibility: 'private' }, [], at))).rejects.toMatchObject({ field: 'path', code: 'taken' });
    await expect(store.commit(() => insertGroup(store, { path: 'jsmith', name: 'J', visibility: 'private' }, [], at))).rejects.toMatchObject({ field: 'path', code: 'taken' });
    await expect(store.commit(() => insertProject(store, 'nobody', { path: 'p', name: 'P', visibility: 'private' }, [], at))).rejects.toMatchObject({ field: 'namespace', code: 'unknown' });
    expect(JSON.stringify(store.data)).toBe(before);
  });
});
