// The Layout section of docs/contributing.md says where tests live; this holds its list of domain modules without a test of their
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

describe('the test layout in docs/contributing.md', () => {
  it('names exactly the domain modules without a test of the same name, and the tests that cover them', async () => {
    const guide = (await readFile(new URL('docs/contributing.md', root), 'utf8')).replace(/\s+/g, ' ');
    const start = guide.indexOf('Tests mirror the source:');
    expect(start, 'the guide has the sentence').toBeGreaterThan(-1);
    const sentence = guide.slice(start, guide.indexOf('; `packages/server/test/http/*`', start));
    expect(sentence).toContain('has a file for each domain module of the same name');

    // The ports are interfaces: the store's suite holds them, aggregate by aggregate on every backend.
    const domain = (await modules(new URL('src/domain/', server), '.ts')).filter((m) => !m.startsWith('storage/'));
    expect(sentence).toContain('the ports under `domain/storage/` are interfaces');
    const tested = new Set(await modules(new URL('test/domain/', server), '.test.ts'));
    const named = [...sentence.matchAll(/`([^`]+)`/g)].map((m) => m[1]!).filter((name) => !name.startsWith('packages/') && !name.endsWith('/'));
    expect(named.filter((name) => domain.includes(name)).sort()).toEqual(domain.filter((m) => !tested.has(m)));

    // The rest are the tests that cover them, under test/http/ unless the path says otherwise.
    const tests = new Set(await modules(new URL('test/', server), '.test.ts'));
    for (const name of named.filter((n) => !domain.includes(n))) expect(tests.has(name) || tests.has(`http/${name}`), name).toBe(true);
  });
});

/** Every relative import in `src/`, as [importing file, imported file], both relative to `src/` (`.js` read as `.ts`). */
async function sourceImports(): Promise<Array<[string, string]>> {
  const src = new URL('src/', server);
  const files = (await modules(src, '.ts')).map((m) => `${m}.ts`);
  const edges: Array<[string, string]> = [];
  for (const file of files) {
    const text = await readFile(new URL(file, src), 'utf8');
    for (const [, specifier] of text.matchAll(/(?:from|import\()\s*'(\.[^']+)'/g)) {
      const target = new URL(specifier!, new URL(file, src)).pathname.slice(src.pathname.length).replace(/\.js$/, '.ts');
      edges.push([file, target]);
    }
  }
  return edges;
}

/** The room of a file: its first folder under `src/`, or the file itself at the root (`config.ts`, `testing.ts`, ...). */
const roomOf = (file: string) => file.split('/')[0]!.replace(/\.ts$/, '');

describe('the direction of imports (http → domain ← store)', () => {
  it('the domain imports no store, HTTP, page or command module: it owns the storage interfaces it asks (domain/storage)', async () => {
    const outward = (await sourceImports()).filter(([from, to]) => roomOf(from) === 'domain' && !['domain', 'openapi', 'explained-error'].includes(roomOf(to)));
    expect(outward).toEqual([]);
  });

  it('the store imports from the domain only its ports (domain/storage), never a rule', async () => {
    const rules = (await sourceImports()).filter(([from, to]) => roomOf(from) === 'store' && roomOf(to) === 'domain' && !to.startsWith('domain/storage/'));
    expect(rules).toEqual([]);
  });

  it('pages and the document import no HTTP handler or store', async () => {
    const wrong = (await sourceImports()).filter(([from, to]) => ['pages', 'openapi'].includes(roomOf(from)) && ['http', 'store'].includes(roomOf(to)));
    expect(wrong).toEqual([]);
  });

  it('no two rooms import each other, even through others', async () => {
    const rooms = new Map<string, Set<string>>();
    for (const [from, to] of await sourceImports()) {
      if (roomOf(from) !== roomOf(to)) rooms.set(roomOf(from), (rooms.get(roomOf(from)) ?? new Set()).add(roomOf(to)));
    }
    const reaches = (start: string, goal: string, seen = new Set<string>()): boolean =>
      [...(rooms.get(start) ?? [])].some((next) => next === goal || (!seen.has(next) && (seen.add(next), reaches(next, goal, seen))));
    const circles = [...rooms.keys()].filter((room) => reaches(room, room));
    expect(circles).toEqual([]);
  });
});

describe('sizes (a long function or file is a room that wants dividing)', async () => {
  const ts = (await import('typescript')).default;
  const roots = ['packages/server/src/', 'packages/sdk/src/', 'bench/'];
  const sources = async () =>
    (await Promise.all(roots.map(async (dir) => (await modules(new URL(dir, root), '.ts')).map((m) => `${dir}${m}.ts`))))
      .flat()
      .filter((file) => !file.includes('/generated/') && !file.endsWith('.d.ts'));
  const lines = (sf: import('typescript').SourceFile, node: import('typescript').Node) =>
    sf.getLineAndCharacterOfPosition(node.getEnd()).line - sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;

  it('no hand-written source file passes 450 lines', async () => {
    const long: string[] = [];
    for (const file of await sources()) {
      const count = (await readFile(new URL(file, root), 'utf8')).trimEnd().split('\n').length;
      if (count > 450) long.push(`${file}: ${count}`);
    }
    expect(long).toEqual([]);
  });

  it('no function in it passes 80 lines', async () => {
    const long: string[] = [];
    for (const file of await sources()) {
      const sf = ts.createSourceFile(file, await readFile(new URL(file, root), 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (node: import('typescript').Node): void => {
        if (ts.isFunctionLike(node) && 'body' in node && node.body && lines(sf, node) > 80) {
          long.push(`${file}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}: ${lines(sf, node)}`);
        }
        ts.forEachChild(node, visit);
      };
      visit(sf);
    }
    expect(long).toEqual([]);
  });
});
