// Delivering the outbox: a worker claims due messages, sends each through the transport, and records what happened.
// A temporary refusal (SMTP 4xx) or an unreachable server is retried with exponential backoff; a permanent refusal
// (5xx) fails the message with the server's reason, as does running out of attempts. A worker that dies between
// sending and recording leaves its claim to run out, and the message is sent again: the only way a message goes twice.
import { createRequire } from 'node:module';
import type { OutboxMessageRecord } from './storage/records.js';
import type { MailStorage } from './storage/index.js';
import { epochSeconds } from './time.js';

/** How long a worker's claim on a message lasts unless told otherwise: longer than a send can take. */
export const defaultLeaseSeconds = 60;

export interface MailTransport {
  /** Resolves once the server accepted the message; rejects with `permanent` set when it refused it for good. */
  send(message: OutboxMessageRecord): Promise<void>;
  close(): void;
}

export class DeliveryError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
  }
}

/** SMTP through nodemailer (`smtp://`, `smtps://`, credentials and TLS options in the URL, as nodemailer reads it). */
export function smtpTransport(url: string, from: string): MailTransport {
  // Loaded here, so that a server without an SMTP server does not spend its start loading nodemailer.
  const nodemailer = createRequire(import.meta.url)('nodemailer') as typeof import('nodemailer');
  const transporter = nodemailer.createTransport(url);
  return {
    async send(message) {
      try {
        const { 'Message-ID': messageId, ...headers } = message.headers;
        await transporter.sendMail({ from, to: message.to, subject: message.subject, text: message.text, headers, ...(messageId ? { messageId } : {}) });
      } catch (error) {
        const { responseCode, message: text } = error as { responseCode?: number; message: string };
        throw new DeliveryError(text, responseCode !== undefined && responseCode >= 500 && responseCode < 600);
      }
    },
    close: () => transporter.close(),
  };
}

/** Without an SMTP server: one log line per message (recipient, subject, reason), nothing else of it. */
export function logTransport(log: (line: string) => void): MailTransport {
  return {
    async send(message) {
      log(`mail to=${message.to} subject=${JSON.stringify(message.subject)} reason=${message.headers['X-GitLab-NotificationReason'] ?? ''}`);
    },
    close: () => undefined,
  };
}

export interface DeliveryOptions {
  /** How often to look for due messages, in milliseconds. */
  pollMs?: number;
  batch?: number;
  /** How long a claim lasts, in seconds: longer than a send can take. */
  leaseSeconds?: number;
  /** The first retry's delay in seconds, doubled each time up to `maxBackoffSeconds`. */
  backoffSeconds?: number;
  maxBackoffSeconds?: number;
  maxAttempts?: number;
  now?: () => number;
}

/** What became of one attempt to deliver a message: sent, queued again for later, or given up. */
export type DeliveryOutcome = 'sent' | 'retry' | 'failed';

export interface MailDelivery {
  /** Looks for due messages now rather than at the next poll. */
  kick(): void;
  /** Told the outcome of every attempt once it is recorded (the metrics' delivery attempts). */
  observeAttempts(observer: (outcome: DeliveryOutcome) => void): void;
  /** Finishes the round under way and stops. */
  stop(): Promise<void>;
}

export function startMailDelivery(mail: MailStorage, transport: MailTransport, options: DeliveryOptions = {}): MailDelivery {
  const { pollMs = 1_000, batch = 20, leaseSeconds = defaultLeaseSeconds, backoffSeconds = 2, maxBackoffSeconds = 600, maxAttempts = 10, now = () => epochSeconds() } = options;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<void> = Promise.resolve();
  let again = false;
  const observers: Array<(outcome: DeliveryOutcome) => void> = [];

  const attempt = async (message: OutboxMessageRecord): Promise<DeliveryOutcome> => {
    try {
      await transport.send(message);
      await mail.markSent(message.id, now());
      return 'sent';
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const given = error instanceof DeliveryError && error.permanent ? `refused: ${reason}` : message.attempts >= maxAttempts ? `gave up after ${message.attempts} attempts: ${reason}` : null;
      if (given !== null) {
        await mail.markFailed(message.id, given);
        return 'failed';
      }
      const delay = Math.min(backoffSeconds * 2 ** (message.attempts - 1), maxBackoffSeconds);
      await mail.markRetry(message.id, now() + delay, reason);
      return 'retry';
    }
  };
  const deliver = async (message: OutboxMessageRecord) => {
    const outcome = await attempt(message);
    for (const observer of observers) observer(outcome);
  };

  const runRound = async () => {
    do {
      again = false;
      const due = await mail.claimDue(now(), batch, leaseSeconds);
      await Promise.all(due.map(deliver));
      if (due.length === batch) again = true;
    } while (again && !stopped);
  };

  const schedule = () => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(tick, pollMs);
    timer.unref();
  };
  const tick = () => {
    round = round.then(runRound).catch(() => undefined).finally(schedule);
  };
  schedule();

  return {
    kick() {
      if (stopped) return;
      clearTimeout(timer);
      tick();
    },
    observeAttempts(observer) {
      observers.push(observer);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await round;
      transport.close();
    },
  };
}
