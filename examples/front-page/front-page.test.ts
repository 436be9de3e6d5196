// The README's "Sign in with it" is sign-in.ts for a newcomer to run as is: this holds the block to the file, and runs
// the file against a server started as `npm start` starts it, with the demo on, signing in with the password the
// server printed.
import { readFile } from 'node:fs/promises';
import { afterEach, expect, it, vi } from 'vitest';
import { startCli, stopCli, type CliProcess } from '../../packages/server/test/hardening/support.js';

const read = (path: string) => readFile(new URL(path, import.meta.url), 'utf8');

it('is the README\'s "Sign in with it" block, character for character', async () => {
  const readme = await read('../../README.md');
  const start = readme.indexOf('\n## Sign in with it\n');
  expect(start, 'the README has the section').toBeGreaterThan(-1);
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  expect(/^```ts\n([\s\S]*?)^```$/m.exec(section)?.[1]).toBe((await read('./sign-in.ts')).replace(/\n*$/, '\n'));
});

let cli: CliProcess | undefined;
afterEach(async () => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  if (cli) await stopCli(cli);
});

it("signs the demo user in and switches on the demo project's failed pipelines", async () => {
  cli = await startCli(['--memory', '--demo']);
  const deadline = Date.now() + 10_000;
  let printed: RegExpExecArray | null;
  while (!(printed = /as demo \/ (\S+)\n/.exec(cli.stderr()))) {
    if (Date.now() > deadline) throw new Error(`no demo credentials on standard error:\n${cli.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  vi.stubEnv('TOKENBELL_URL', cli.baseUrl);
  vi.stubEnv('DEMO_PASSWORD', printed[1]!);
  const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);

  await import('./sign-in.js');

  expect(log.mock.calls).toEqual([
    ['Signed in as demo (demo@example.com); the token lasts 7200 s'],
    ['demo-group/demo-project:', { level: 'custom', events: expect.objectContaining({ failed_pipeline: true }) }],
  ]);
});
