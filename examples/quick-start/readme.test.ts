// The test kit's guide (docs/test-kit.md) opens with quick-start.test.ts for a newcomer to paste as is; it is a copy, so this
// holds it to the file that runs here, and its install line to the packages the file imports.
import { readFile } from 'node:fs/promises';
import { expect, it } from 'vitest';

const read = (path: string) => readFile(new URL(path, import.meta.url), 'utf8');

/** The guide's opening, before its first section. */
async function testingSection(): Promise<string> {
  const guide = await read('../../docs/test-kit.md');
  expect(guide.startsWith('# Testing your app with tokenbell\n'), 'the guide has its title').toBe(true);
  const end = guide.indexOf('\n## ');
  return guide.slice(0, end < 0 ? undefined : end);
}

/** The content of the section's first fenced block of `language`, or undefined. */
const firstBlock = (section: string, language: string) => new RegExp('^```' + language + '\\n([\\s\\S]*?)^```$', 'm').exec(section)?.[1];

it("opens the test kit's guide with quick-start.test.ts, character for character", async () => {
  const file = await read('./quick-start.test.ts');
  expect(firstBlock(await testingSection(), 'ts')).toBe(file.replace(/\n*$/, '\n'));
});

it('installs every package quick-start.test.ts imports', async () => {
  const install = firstBlock(await testingSection(), 'sh');
  expect(install).toMatch(/^npm install --save-dev [^\n]+\n$/);
  const installed = install!.trim().split(' ').slice(3);
  const imported = [...(await read('./quick-start.test.ts')).matchAll(/^import .* from '([^']+)';$/gm)].map((m) => m[1]!);
  const packageOf = (specifier: string) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');
  expect(imported.map(packageOf).sort()).toEqual(installed.sort());
  expect(installed).toContain('@tokenbell/server');
});
