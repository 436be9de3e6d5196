// Real temporary directories for store tests, and stores that are always closed (so their locks are released).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { openStore, type OpenStoreOptions, type Store } from '../../src/store/file/store.js';

export function useTempStores(): { dir: () => string; file: (name?: string) => string; open: (file: string | null, options?: Omit<OpenStoreOptions, 'file'>) => Promise<Store> } {
  let dir = '';
  const stores: Store[] = [];
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tokenbell-store-'));
  });
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    await rm(dir, { recursive: true, force: true });
  });
  return {
    dir: () => dir,
    file: (name = 'data.json') => join(dir, name),
    open: async (file, options = {}) => {
      const store = await openStore({ file, ...options });
      stores.push(store);
      return store;
    },
  };
}
