// The `npm run mock` of docs/mock.md, with a port of the reader's choosing: the script must leave the port to its caller.
import { spawn } from 'node:child_process';
import { expect, it } from 'vitest';
import { repoRoot } from '../../scripts/lib/paths.js';
import { freePort, waitForHttp } from '../../scripts/lib/processes.js';

it('npm run mock -- --port N serves the mock document for that port on it', async () => {
  const port = await freePort();
  // Its own process group: npm starts a shell that starts Prism, and all of them must stop with the test.
  const child = spawn('npm', ['run', 'mock', '--', '--port', String(port)], { cwd: repoRoot, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    await waitForHttp('npm run mock', { child, output: () => output }, `http://127.0.0.1:${port}/.well-known/oauth-authorization-server`, { timeoutMs: 30_000 });
    // The mock's own address in its discovery documents, and the API under /api/v4 as under /api/v3.
    const metadata = (await (await fetch(`http://127.0.0.1:${port}/.well-known/oauth-authorization-server`)).json()) as { issuer: string; token_endpoint: string };
    expect(metadata).toMatchObject({ issuer: `http://127.0.0.1:${port}`, token_endpoint: `http://127.0.0.1:${port}/oauth/token` });
    const user = await fetch(`http://127.0.0.1:${port}/api/v4/user`, { headers: { 'PRIVATE-TOKEN': 'any' } });
    expect(user.status).toBe(200);
    // Prism's own CORS headers are off (the document carries the server's): no credentials, any origin.
    expect(user.headers.get('access-control-allow-credentials')).toBeNull();
    expect(user.headers.get('access-control-allow-origin')).toBe('*');
  } finally {
    process.kill(-child.pid!, 'SIGTERM');
    await exited;
  }
}, 60_000);
