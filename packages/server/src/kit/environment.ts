// What the ready-made fixtures (vitest, Jest, Playwright) start when a suite names no options: a configuration file
// cannot pass a seed object to a module it names by string, so the seed is a file, found the same way by each.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { StartTokenbellOptions } from '../testing.js';

/** The seed file a fixture looks for in the suite's root directory when `TOKENBELL_SEED` is not set. */
export const seedFileName = 'tokenbell.seed.json';

/**
 * `{ seed }`: the file `TOKENBELL_SEED` names (relative to `root`), as the server's `--seed` takes it; else
 * `tokenbell.seed.json` in `root` if there is one; else no seed (an administrator `root` only).
 */
export function optionsFromEnvironment(root: string, env: NodeJS.ProcessEnv = process.env): StartTokenbellOptions {
  if (env.TOKENBELL_SEED) return { seed: resolve(root, env.TOKENBELL_SEED) };
  const conventional = resolve(root, seedFileName);
  return existsSync(conventional) ? { seed: conventional } : {};
}
