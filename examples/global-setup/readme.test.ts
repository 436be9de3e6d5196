// The README's testing section shows tokenbell.setup.ts for a reader to paste as is; it is a copy, so this holds it
// to the file that runs here.
import { readFile } from 'node:fs/promises';
import { expect, it } from 'vitest';

const read = (path: string) => readFile(new URL(path, import.meta.url), 'utf8');

it('shows tokenbell.setup.ts in the README, character for character, under "One instance for the whole run"', async () => {
  const readme = await read('../../README.md');
  const start = readme.indexOf('\n**One instance for the whole run.**');
  expect(start, 'the README has the paragraph').toBeGreaterThan(-1);
  const block = /^```ts\n([\s\S]*?)^```$/m.exec(readme.slice(start))?.[1];
  expect(block).toBe((await read('./tokenbell.setup.ts')).replace(/\n*$/, '\n'));
});
