// The test kit's guide (docs/test-kit.md) shows the one-line globalSetup and the seed it reads for a reader to paste as is; this
// holds them to the example that runs here.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import config from './vitest.config.js';

const read = (path: string) => readFile(new URL(path, import.meta.url), 'utf8');

async function paragraph(): Promise<string> {
  const guide = await read('../../docs/test-kit.md');
  const start = guide.indexOf('\n**One instance for the whole run, with vitest.**');
  expect(start, 'the guide has the paragraph').toBeGreaterThan(-1);
  return guide.slice(start, guide.indexOf('\n**With Jest.**', start));
}

it('shows tokenbell.seed.json in the test kit\'s guide, character for character, under "One instance for the whole run"', async () => {
  const block = /^```json\n([\s\S]*?)^```$/m.exec(await paragraph())?.[1];
  expect(block).toBe((await read('./tokenbell.seed.json')).replace(/\n*$/, '\n'));
});

it("names @tokenbell/server/vitest as the globalSetup, which the example names by the entry's source", async () => {
  expect(/^```ts\n([\s\S]*?)^```$/m.exec(await paragraph())?.[1]).toBe("test: { globalSetup: ['@tokenbell/server/vitest'], fileParallelism: false },\n");
  const { exports } = JSON.parse(await read('../../packages/server/package.json')) as { exports: Record<string, { default: string }> };
  expect(exports['./vitest']?.default).toBe('./dist/vitest.js');
  expect(config.test?.globalSetup).toEqual([fileURLToPath(new URL('../../packages/server/src/vitest.ts', import.meta.url))]);
  expect(config.test?.fileParallelism).toBe(false);
});
