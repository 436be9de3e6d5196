// vitest global setup: one throwaway PostgreSQL cluster for the whole run (about a second to start); each test file
// makes its own databases in it (createDatabase), so files never share state.
import type { TestProject } from 'vitest/node';
import { startCluster, type TestCluster } from './postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A superuser URL of the run's PostgreSQL cluster. */
    postgresUrl: string;
  }
}

let cluster: TestCluster | undefined;

export async function setup(project: TestProject): Promise<void> {
  cluster = await startCluster();
  project.provide('postgresUrl', cluster.url);
}

export async function teardown(): Promise<void> {
  await cluster?.stop();
}
