// Delivering the notification mail. The spec leaves the mail's format and transport open (section 6), so this stays
// small: a pluggable sink, a console sink for development and a JSON-lines file that tests and operators can read.
import { appendFile } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import type { RecipientStorage } from '../store/storage.js';
import { recipientsAmong, type NotifiableEvent, type Recipient } from './recipients.js';
import { projectFullPath } from './visibility.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/** One line per mail; the text is JSON-quoted so a multi-line body cannot break the one-line-per-mail layout. */
export class ConsoleMailer implements Mailer {
  constructor(private readonly out: Writable = process.stdout) {}

  send(message: MailMessage): Promise<void> {
    const line = `mail to=${message.to} subject=${JSON.stringify(message.subject)} text=${JSON.stringify(message.text)}\n`;
    return new Promise((resolve, reject) => {
      this.out.write(line, (err) => (err ? reject(err) : resolve()));
    });
  }
}

/** Appends `{"to","subject","text"}` JSON lines. Sends are chained so lines keep the order of the calls. */
export class FileMailer implements Mailer {
  private tail: Promise<void> = Promise.resolve();

  constructor(readonly path: string) {}

  send(message: MailMessage): Promise<void> {
    const line = JSON.stringify({ to: message.to, subject: message.subject, text: message.text }) + '\n';
    const next = this.tail.then(() => appendFile(this.path, line, 'utf8'));
    // A failed append must not block the ones queued after it; the caller of this send still sees the error.
    this.tail = next.catch(() => undefined);
    return next;
  }
}

const reasonText: Record<Recipient['reason'], string> = {
  participating: 'you are participating',
  mentioned: 'you were mentioned',
  watching: 'you are watching the project',
  custom: 'you switched this event on in a custom notification setting',
};

/** Mails every recipient of the event, one message each, in recipient order; returns the recipients. */
export async function notify(storage: RecipientStorage, mailer: Mailer, event: NotifiableEvent): Promise<Recipient[]> {
  const audience = await storage.audience(event.project_id, [...event.participants, ...event.mentioned]);
  if (!audience) throw new RangeError(`unknown project: ${event.project_id}`);
  const recipients = recipientsAmong(audience, event);
  const path = projectFullPath(audience.project);
  for (const r of recipients) {
    await mailer.send({
      to: r.email,
      subject: `[${path}] ${event.kind}`,
      text: `${event.kind} in ${path}. You are receiving this because ${reasonText[r.reason]}.\n`,
    });
  }
  return recipients;
}
