import type { MailHealth, MailMessage, Mailer } from '../../src/platform/mail/mailer.js';

/** Captures e-mail in memory (mail leaves the process, so tests may fake it). */
export class Mailbox implements Mailer {
  readonly messages: MailMessage[] = [];
  private lastSentAt: Date | null = null;

  async send(message: MailMessage): Promise<void> {
    this.messages.push(message);
    this.lastSentAt = new Date();
  }

  health(): MailHealth {
    return { transport: 'other', waiting: 0, lastSentAt: this.lastSentAt, lastError: null };
  }

  /** The one-time token of the latest sign-in link sent to `email`. */
  tokenFor(email: string): string {
    const message = [...this.messages].reverse().find((candidate) => candidate.to === email.toLowerCase());
    const token = message && /\/browse\?token=([\w%-]+)/.exec(message.text)?.[1];
    if (!token) throw new Error(`no sign-in link was sent to ${email}`);
    return decodeURIComponent(token);
  }
}
