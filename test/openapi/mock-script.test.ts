// The README's `npm run mock`, with a port of the reader's choosing: the script must leave the port to its caller.
import { spawn } from 'node:child_process';
import { expect, it } from 'vitest';
import { repoRoot } from '../../scripts/lib/paths.js';
import { freePort, waitForHttp } from '../../scripts/lib/processes.js';

it('npm run mock -- --port N serves the document on that port', async () => {
  const port = await freePort();
  // Its own process group: npm starts a shell that starts Prism, and all of them must stop with the test.
  const child = spawn('npm', ['run', 'mock', '--', '--port', String(port)], { cwd: repoRoot, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    await waitForHttp('npm run mock', { child, output: () => output }, `http://127.0.0.1:${port}/.well-known/oauth-authorization-server`, { timeoutMs: 30_000 });
    const metadata = (await (await fetch(`http://127.0.0.1:${port}/.well-known/oauth-authorization-server`)).json()) as { issuer: string };
    expect(metadata.issuer).toMatch(/^https?:\/\//);
  } finally {
    process.kill(-child.pid!, 'SIGTERM');
    await exited;
  }
}, 60_000);
