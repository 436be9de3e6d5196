// Starts and stops the test SMTP server process (smtp-server-process.ts) and reads what it received.
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../scripts/lib/processes.js';

const script = fileURLToPath(new URL('./smtp-server-process.ts', import.meta.url));

export interface ReceivedMessage {
  from: string;
  to: string[];
  raw: string;
  /** The headers, by lower-cased name (the first of each). */
  headers: Record<string, string>;
  body: string;
}

export interface TestSmtpServer {
  url: string;
  port: number;
  /** Every message accepted so far, across restarts, in order. */
  received(): ReceivedMessage[];
  /** Refuse every recipient for now (451) or for good (550), or accept again (null). */
  refuse(kind: 'temporary' | 'permanent' | null): Promise<void>;
  /** Stops the process (SIGKILL: a server that vanishes), keeping what it received. */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** A message as the SMTP server received it: envelope, raw text, headers (first of each, unfolded) and body. */
export function parseMessage(from: string, to: string[], raw: string): ReceivedMessage {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).toLowerCase();
    if (!(name in headers)) headers[name] = line.slice(colon + 1).trim();
  }
  return { from, to, raw, headers, body: raw.slice(split + 4) };
}

function parse(line: string): ReceivedMessage {
  const { from, to, raw } = JSON.parse(line) as { from: string; to: string[]; raw: string };
  return parseMessage(from, to, raw);
}

export async function startSmtpServer(): Promise<TestSmtpServer> {
  const dir = await mkdtemp(join(tmpdir(), 'tokenbell-smtp-'));
  const file = join(dir, 'received.jsonl');
  const port = await freePort();
  let child: ChildProcess | null = null;
  const ask = (message: object) =>
    new Promise<void>((resolve, reject) => {
      if (!child) return reject(new Error('the SMTP server is not running'));
      child.once('message', () => resolve());
      child.send(message);
    });
  const start = async () => {
    child = fork(script, [String(port), file], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    await new Promise<void>((resolve, reject) => {
      child!.once('message', () => resolve());
      child!.once('exit', (code) => reject(new Error(`the SMTP server exited (${code}) before listening`)));
    });
  };
  const stop = async () => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    child = null;
  };
  await start();
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    received() {
      let text = '';
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        return [];
      }
      return text.split('\n').filter(Boolean).map(parse);
    },
    refuse: (kind) => ask({ refuse: kind }),
    stop,
    start,
    async close() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
