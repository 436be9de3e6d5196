// What a run is given: the quick or full settings, whether it is the quick bench, and its scratch folder.
export type Config = ReturnType<typeof configFor>;

export function configFor(quick: boolean) {
  return quick
    ? { rounds: 1, seconds: 1, warmupSeconds: 0.5, connections: [1, 10, 50], stores: [1_000], coldStarts: 1, memoryRequests: 2_000, memorySeconds: 4, sdkMs: 300, kitStarts: 3, kitResets: 40, kitResetSeconds: 3, npmStartRounds: 1, kitCycles: 10, kitCycleResets: 100, soakSeconds: 20, soakSliceSeconds: 2 }
    : { rounds: 3, seconds: 3, warmupSeconds: 1, connections: [1, 10, 50], stores: [1_000, 10_000, 100_000], coldStarts: 3, memoryRequests: 100_000, memorySeconds: 60, sdkMs: 1_500, kitStarts: 10, kitResets: 200, kitResetSeconds: 6, npmStartRounds: 3, kitCycles: 100, kitCycleResets: 1_000, soakSeconds: 300, soakSliceSeconds: 5 };
}

export interface Run {
  quick: boolean;
  config: Config;
  /** A temporary folder for the run's stores, removed at the end. */
  work: string;
}

export const tokenConnections = 10;
export const tokenConnectionCounts = [10, 50];
