import nodemailer from 'nodemailer';
import PQueue from 'p-queue';
import { AppError } from '../errors.js';
import type { Logger } from '../logger.js';
import { systemClock, type Clock } from '../clock.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

/**
 * What the mail path met lately (status report). `lastError` carries nodemailer's error code only
 * (`ECONNECTION`, `ETIMEDOUT`, `EPROTOCOL`, …): its messages name the SMTP server's address, and the
 * report is public.
 */
export interface MailHealth {
  transport: 'smtp' | 'log' | 'other';
  /** Messages accepted and not yet sent (waiting or being sent). */
  waiting: number;
  lastSentAt: Date | null;
  lastError: { at: Date; code: string } | null;
}

export interface Mailer {
  /** Accepts a message for delivery; with SMTP the sending happens after the caller has its answer. */
  send(message: MailMessage): Promise<void>;
  health(): MailHealth;
  /** Waits for accepted messages to be sent, at most `timeoutMs`; later ones stay unsent. */
  close?(timeoutMs: number): Promise<void>;
}

export const SMTP_NOT_SET_WARNING = 'SMTP_URL is not set: sign-in e-mails, with their one-time links, are written to this log instead of sent';

/**
 * The log's stand-in for an e-mail without SMTP: recipient, subject and text on one line, the text's
 * line breaks and blank lines folded into single spaces (a link stays whole and copyable).
 */
export function logLineOf(message: MailMessage): string {
  return `e-mail to ${message.to}, "${message.subject}": ${message.text.trim().replace(/\s*\n\s*/g, ' ')}`;
}

/** Messages waiting to be sent at most; past it a sender is refused at once (503) instead of queued. */
export const MAIL_QUEUE_LIMIT = 1_000;
/** Messages sent at once. */
const MAIL_CONCURRENCY = 2;
/**
 * One SMTP exchange's bounds (nodemailer's own default is minutes): a server that does not answer holds
 * a sending place for at most about 20 s, never a request. `SMTP_URL` query parameters override them.
 */
export const SMTP_TIMEOUTS = { connectionTimeout: 5_000, greetingTimeout: 5_000, socketTimeout: 10_000 } as const;

/**
 * E-mail over SMTP_URL with nodemailer, sent from a bounded queue so that a slow or unreachable SMTP
 * server never slows the request that asked for the mail; a failed send is logged (the sign-in link
 * can be asked for again). Without SMTP_URL the message is written to the log instead (local
 * development), as the contract says.
 */
export function createMailer(options: { smtpUrl: string | undefined; from: string; logger: Logger; clock?: Clock }): Mailer {
  const clock = options.clock ?? systemClock;
  const log = options.logger.child({ component: 'mail' });
  if (!options.smtpUrl) {
    // The contract's behaviour, and a secret in the log: said once, loudly, when the process starts.
    log.warn(SMTP_NOT_SET_WARNING);
    return {
      health: () => ({ transport: 'log', waiting: 0, lastSentAt: null, lastError: null }),
      async send(message) {
        // One line a person can find and copy (a sign-in link), at info only: it is a secret.
        log.info(logLineOf(message));
      },
    };
  }
  const transport = nodemailer.createTransport({ ...SMTP_TIMEOUTS, url: options.smtpUrl });
  const queue = new PQueue({ concurrency: MAIL_CONCURRENCY });
  let lastSentAt: Date | null = null;
  let lastError: MailHealth['lastError'] = null;
  return {
    health: () => ({ transport: 'smtp', waiting: queue.size + queue.pending, lastSentAt, lastError }),
    async send(message) {
      if (queue.size + queue.pending >= MAIL_QUEUE_LIMIT) {
        throw new AppError('upstream_unavailable', 'the mail server is not keeping up; try again in a minute');
      }
      void queue.add(async () => {
        try {
          await transport.sendMail({ from: options.from, ...message });
          lastSentAt = clock.now();
        } catch (error) {
          const code = (error as { code?: unknown }).code;
          lastError = { at: clock.now(), code: typeof code === 'string' ? code : 'unknown' };
          log.warn({ err: error, to: message.to }, 'sending an e-mail failed');
        }
      });
    },
    async close(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
      await Promise.race([queue.onIdle(), late]).finally(() => clearTimeout(timer));
      if (queue.size > 0) log.warn({ unsent: queue.size }, 'e-mails still waiting at shutdown were not sent');
      queue.clear();
      transport.close();
    },
  };
}
