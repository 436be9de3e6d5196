// The README is a front page and the guides in docs/ are the rest (issue 41, item 2). A reader follows links between
// them, and from them to the repository's files, so every relative link must land: on a file or folder that exists,
// and at a heading of the page it names when it has an #anchor (GitHub's slugs). The front page stays short, with the
// two commands and a way to every guide on its first screen.
import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/lib/paths.js';

/** The pages a reader moves between: the front page, the guides, and the packages' READMEs that point into docs/. */
async function pages(): Promise<string[]> {
  const guides = (await readdir(join(repoRoot, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  return ['README.md', ...guides.sort(), 'packages/sdk/README.md', 'packages/server/README.md'];
}

/** Markdown without its fenced code blocks and inline code, where a `](` or a `#` is code, not a link or a heading. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '').replace(/`[^`\n]*`/g, 'code');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens; a repeated one gets -1, -2, ... */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  const headings = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '').matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm);
  for (const [, text] of headings) {
    const base = text!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

/** Every relative link of a page (`[text](target)`, `<img src>`), as written. */
function links(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
  const images = [...text.matchAll(/<img\s[^>]*src="([^"]+)"/g)].map((m) => m[1]!);
  return [...inline, ...images].filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** The links of `page` (relative to the repository) that lead nowhere, each with the reason. */
async function brokenLinks(page: string, markdown: string, read = (path: string) => readFile(join(repoRoot, path), 'utf8')): Promise<string[]> {
  const broken: string[] = [];
  for (const link of links(markdown)) {
    const [path, anchor] = link.split('#', 2) as [string, string | undefined];
    const target = path === '' ? page : relative(repoRoot, join(repoRoot, dirname(page), decodeURI(path)));
    if (target.startsWith('..')) {
      broken.push(`${link}: outside the repository`);
      continue;
    }
    const exists = await stat(join(repoRoot, target)).then(() => true, () => false);
    if (!exists && !(path === '' && page === target)) {
      broken.push(`${link}: no file ${target}`);
      continue;
    }
    if (anchor === undefined) continue;
    if (!target.endsWith('.md')) {
      broken.push(`${link}: an anchor into ${target}, which has no headings`);
      continue;
    }
    const headings = anchors(target === page ? markdown : await read(target));
    if (!headings.has(anchor)) broken.push(`${link}: no heading #${anchor} in ${target}`);
  }
  return broken;
}

describe('links between the README and the guides', () => {
  it('every relative link lands on a file of the repository, and every #anchor on a heading there', async () => {
    const broken: string[] = [];
    for (const page of await pages()) {
      for (const problem of await brokenLinks(page, await readFile(join(repoRoot, page), 'utf8'))) broken.push(`${page}: ${problem}`);
    }
    expect(broken).toEqual([]);
  });

  it('finds a broken link: a missing file, a missing heading, a link out of the repository', async () => {
    const page = 'docs/example.md';
    const markdown = [
      '# Example',
      '## A heading (with punctuation), `code` and more',
      'See [the README](../README.md), [running](running.md#configuration) and [here](#a-heading-with-punctuation-code-and-more).',
      'Broken: [gone](gone.md), [no heading](running.md#no-such-heading), [here](#nowhere), [out](../../etc/passwd).',
      '```md',
      '[in a code block](ignored.md) is code',
      '```',
      'and `[inline code](ignored.md)` too.',
    ].join('\n');
    expect(await brokenLinks(page, markdown)).toEqual([
      'gone.md: no file docs/gone.md',
      'running.md#no-such-heading: no heading #no-such-heading in docs/running.md',
      '#nowhere: no heading #nowhere in docs/example.md',
      '../../etc/passwd: outside the repository',
    ]);
  });

  it("names headings as GitHub does", () => {
    const markdown = '# The SDK\n## Device flow (for CLI authors)\n## `sudo` and `admin_mode`\n## Tests\n## Tests\n```sh\n# a comment\n```\n';
    expect([...anchors(markdown)]).toEqual(['the-sdk', 'device-flow-for-cli-authors', 'sudo-and-admin_mode', 'tests', 'tests-1']);
  });
});

describe('the README as a front page', () => {
  it('is at most 200 lines', async () => {
    const lines = (await readFile(join(repoRoot, 'README.md'), 'utf8')).trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(200);
  });

  it('has the two commands and a link to every guide on its first screen (40 lines)', async () => {
    const firstScreen = (await readFile(join(repoRoot, 'README.md'), 'utf8')).split('\n').slice(0, 40).join('\n');
    expect(firstScreen).toContain('npm ci && npm start');
    expect(firstScreen).toMatch(/^npm test\b/m);
    const guides = (await pages()).filter((page) => page.startsWith('docs/'));
    expect(guides.length).toBeGreaterThanOrEqual(8);
    expect(links(firstScreen).map((link) => link.split('#')[0])).toEqual(expect.arrayContaining(guides));
  });
});

describe('the guides', () => {
  it('each opens with a line saying who it is for, and links back to the README', async () => {
    for (const page of (await pages()).filter((p) => p.startsWith('docs/'))) {
      const [title, blank, forWhom] = (await readFile(join(repoRoot, page), 'utf8')).split('\n');
      expect(title, page).toMatch(/^# \S/);
      expect(blank, page).toBe('');
      expect(forWhom, page).toMatch(/^For /);
      expect(links(await readFile(join(repoRoot, page), 'utf8')), page).toContain('../README.md');
    }
  });
});
