// vitest global setup: the server as it ships, for the tests that start it as a process (the CLI, the operator's
// starts, the contract suite's reference server): bundled by the package's own build scripts into a throwaway copy
// of the package (its package.json, dist/ and migrations), so a test run never touches the checkout's dist/, and
// the in-process tests keep running the sources. About a second, once per project.
import { copyFile, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { repoRoot } from '../../scripts/lib/paths.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The bundled CLI's entry (dist/cli/index.js) in this run's build of the server. */
    serverCli: string;
  }
}

const server = join(repoRoot, 'packages/server');
let build: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  // Under the server's node_modules, so the bundle's imports of its dependencies resolve as an installed package's do.
  const builds = join(server, 'node_modules/.cache/tokenbell-test-builds');
  await mkdir(builds, { recursive: true });
  build = await mkdtemp(join(builds, 'build-'));
  const dist = join(build, 'dist');
  await copyFile(join(server, 'package.json'), join(build, 'package.json'));
  await symlink(join(server, 'migrations'), join(build, 'migrations'));
  const { bundle } = (await import(join(server, 'scripts/bundle.mjs'))) as { bundle: (dist: string) => Promise<string[]> };
  const { copyAssets } = (await import(join(server, 'scripts/copy-assets.mjs'))) as { copyAssets: (dist: string) => Promise<void> };
  await Promise.all([bundle(dist), copyAssets(dist)]);
  project.provide('serverCli', join(dist, 'cli/index.js'));
}

export async function teardown(): Promise<void> {
  if (build) await rm(build, { recursive: true, force: true });
}
