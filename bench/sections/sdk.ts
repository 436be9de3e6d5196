// SDK overhead: the typed client against a plain fetch of the same URL, in this process, with tinybench.
import { Bench } from 'tinybench';
import { createTokenbellClient } from '../../packages/sdk/src/index.js';
import type { Run } from '../lib/config.js';
import { log, record } from '../lib/figures.js';
import { median } from '../lib/load.js';
import type { Target } from '../lib/processes.js';
import { bearer, readPath } from '../lib/requests.js';
import type { GeneratedStore } from '../lib/store.js';

export async function sdkBenchmark({ config }: Run, reference: Target, store: GeneratedStore): Promise<void> {
  const token = store.accessTokens[0]!;
  const url = `${reference.url}${readPath}`;
  const headers = bearer(token);
  const sdk = createTokenbellClient({ baseUrl: reference.url, auth: { accessToken: token } });
  // Both go through the same global fetch (undici's keep-alive pool) to the same server, and both parse the JSON.
  const plain = async () => {
    const response = await fetch(url, { headers });
    if (response.status !== 200) throw new Error(`plain fetch answered ${response.status}`);
    await response.json();
  };
  const viaSdk = async () => {
    await sdk.notificationSettings.global.get();
  };
  const p50: Record<string, number[]> = { fetch: [], sdk: [] };
  const ratios: number[] = [];
  for (let round = 0; round < config.rounds; round++) {
    log(`sdk round ${round + 1}/${config.rounds}`);
    const bench = new Bench({ time: config.sdkMs, warmupTime: Math.min(500, config.sdkMs), throws: true });
    // Alternating order across rounds, so neither side always runs on the warmer process.
    if (round % 2 === 0) bench.add('fetch', plain).add('sdk', viaSdk);
    else bench.add('sdk', viaSdk).add('fetch', plain);
    await bench.run();
    const latency = (name: string) => {
      const result = bench.getTask(name)!.result;
      if (!('latency' in result)) throw new Error(`tinybench task ${name} has no latency (${result.state})`);
      return result.latency.p50;
    };
    p50.fetch!.push(latency('fetch'));
    p50.sdk!.push(latency('sdk'));
    ratios.push(latency('sdk') / latency('fetch') - 1);
  }
  record('sdk.fetch.p50_ms', median(p50.fetch!));
  record('sdk.client.p50_ms', median(p50.sdk!));
  record('ratio.sdk_overhead_pct', median(ratios) * 100);
}
