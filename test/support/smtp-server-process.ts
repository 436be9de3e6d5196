// A real SMTP server for the mail tests, run as a child process (smtp-server, the SMTP side of Nodemailer's
// project): it listens on loopback, appends every message it accepts to a JSON-lines file as it is accepted, and
// answers as the parent tells it over IPC: accept, refuse for now (451), or refuse for good (550).
import { appendFileSync } from 'node:fs';
import { SMTPServer } from 'smtp-server';

const [port, file] = [Number(process.argv[2]), process.argv[3]!];
let refusal: 'temporary' | 'permanent' | null = null;

process.on('message', (message: { refuse?: 'temporary' | 'permanent' | null }) => {
  if ('refuse' in message) refusal = message.refuse ?? null;
  process.send?.({ ok: true });
});

const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  logger: false,
  onRcptTo(address, _session, callback) {
    if (refusal === 'permanent') return callback(Object.assign(new Error(`5.1.1 ${address.address}: mailbox unavailable`), { responseCode: 550 }));
    if (refusal === 'temporary') return callback(Object.assign(new Error('4.3.0 try again later'), { responseCode: 451 }));
    callback();
  },
  onData(stream, session, callback) {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      // Written before the answer: a message the server acknowledged is on disk even if this process dies next.
      appendFileSync(file, `${JSON.stringify({ from: session.envelope.mailFrom && session.envelope.mailFrom.address, to: session.envelope.rcptTo.map((r) => r.address), raw })}\n`);
      callback();
    });
  },
});
// A client that vanishes mid-message (a sender killed while sending) is a connection error, not the server's end.
server.on('error', () => undefined);
server.listen(port, '127.0.0.1', () => process.send?.({ listening: port }));
