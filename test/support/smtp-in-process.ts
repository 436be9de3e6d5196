// A real SMTP server (smtp-server) in the test's own process, on loopback, for tests that SIGKILL the server
// sending to it: a client that dies in the middle of a transaction makes smtp-server emit 'error' (ECONNRESET), which
// this server counts instead of dying. (test/support/smtp.ts runs the same server as a child process with no 'error'
// listener, so there such a reset ends the SMTP server too.) It accepts everything and keeps what it accepted, parsed
// as smtp.ts parses it.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { parseMessage, type ReceivedMessage } from './smtp.js';

export interface InProcessSmtpServer {
  url: string;
  port: number;
  /** Every message accepted so far, in order. */
  received(): ReceivedMessage[];
  /** How many connections broke in the middle of a transaction (a client killed while sending). */
  resets(): number;
  close(): Promise<void>;
}

export async function startInProcessSmtpServer(): Promise<InProcessSmtpServer> {
  const messages: ReceivedMessage[] = [];
  let resets = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    // A client killed mid-send never says QUIT: do not wait the default 30 s for it on close.
    closeTimeout: 1_000,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', () => undefined);
      stream.on('end', () => {
        // Kept before the answer, as a server that acknowledged a message has it.
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        messages.push(parseMessage(from, session.envelope.rcptTo.map((r) => r.address), Buffer.concat(chunks).toString('utf8')));
        callback();
      });
    },
  });
  server.on('error', () => void resets++);
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    received: () => [...messages],
    resets: () => resets,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
