import nodemailer from 'nodemailer';
import type { Logger } from '../logger.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/**
 * E-mail over SMTP_URL with nodemailer; without SMTP_URL the message is written to the log instead
 * (local development), as the contract says.
 */
export function createMailer(options: { smtpUrl: string | undefined; from: string; logger: Logger }): Mailer {
  const log = options.logger.child({ component: 'mail' });
  if (!options.smtpUrl) {
    return {
      async send(message) {
        log.info({ to: message.to, subject: message.subject, text: message.text }, 'SMTP_URL is not set: e-mail written to the log');
      },
    };
  }
  const transport = nodemailer.createTransport(options.smtpUrl);
  return {
    async send(message) {
      await transport.sendMail({ from: options.from, ...message });
    },
  };
}
