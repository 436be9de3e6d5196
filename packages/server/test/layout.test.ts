// The README's Layout section says where tests live; this holds its list of domain modules without a test of their
// own name to the tree, so a new module without one, or a listed module that gained one, fails here.
import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

const root = new URL('../../../', import.meta.url);
const server = new URL('packages/server/', root);

/** Paths under `dir`, relative to it, of files ending in `suffix`, without the suffix. */
async function modules(dir: URL, suffix: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.filter((f) => f.endsWith(suffix)).map((f) => f.slice(0, -suffix.length).split('\\').join('/')).sort();
}

describe('the README’s test layout', () => {
  it('names exactly the domain modules without a test of the same name, and the tests that cover them', async () => {
    const readme = (await readFile(new URL('README.md', root), 'utf8')).replace(/\s+/g, ' ');
    const start = readme.indexOf('Tests mirror the source:');
    const sentence = readme.slice(start, readme.indexOf('; `packages/server/test/http/*`', start));
    expect(sentence).toContain('has a file for each domain module of the same name');

    const domain = await modules(new URL('src/domain/', server), '.ts');
    const tested = new Set(await modules(new URL('test/domain/', server), '.test.ts'));
    const named = [...sentence.matchAll(/`([^`]+)`/g)].map((m) => m[1]!).filter((name) => !name.startsWith('packages/'));
    expect(named.filter((name) => domain.includes(name)).sort()).toEqual(domain.filter((m) => !tested.has(m)));

    // The rest are the tests that cover them, under test/http/ unless the path says otherwise.
    const tests = new Set(await modules(new URL('test/', server), '.test.ts'));
    for (const name of named.filter((n) => !domain.includes(n))) expect(tests.has(name) || tests.has(`http/${name}`), name).toBe(true);
  });
});
