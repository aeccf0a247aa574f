import { once } from 'node:events';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AppError } from '../../../src/platform/errors.js';
import { createLogger } from '../../../src/platform/logger.js';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createMailer, MAIL_QUEUE_LIMIT, SMTP_NOT_SET_WARNING } from '../../../src/platform/mail/mailer.js';
import { startTestApp } from '../../harness.js';

/** An SMTP server that accepts connections and never says a word (not even its greeting). */
async function startSilentSmtpServer(): Promise<{ url: string; connections: () => number; hangUp(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `smtp://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    /** Closes the connections it holds (the client's send then fails at once). */
    hangUp() {
      for (const socket of sockets) socket.destroy();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('e-mail when the SMTP server does not answer', () => {
  let smtp: Awaited<ReturnType<typeof startSilentSmtpServer>>;
  beforeAll(async () => {
    smtp = await startSilentSmtpServer();
  });
  afterAll(async () => {
    await smtp.close();
  });

  it('answers a sign-in request at once; the mail is tried after the answer', async () => {
    const t = await startTestApp({ jobs: false, env: { SMTP_URL: smtp.url } });
    try {
      const started = Date.now();
      const response = await t.rest({ method: 'POST', url: '/api/auth/magic-link', payload: { email: 'slow-mail@example.com' }, remoteAddress: '10.60.0.1' });
      expect(response.statusCode).toBe(200);
      // The SMTP exchange waits 5 s for a greeting that never comes; the answer does not wait for it.
      expect(Date.now() - started).toBeLessThan(2000);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(smtp.connections()).toBeGreaterThan(0);
    } finally {
      smtp.hangUp();
      await t.close();
    }
  });

  it(`keeps at most ${MAIL_QUEUE_LIMIT} mails waiting and refuses the next with upstream_unavailable`, async () => {
    const mailer = createMailer({ smtpUrl: smtp.url, from: 'directory@example.com', logger: createLogger('silent') });
    try {
      const message = (n: number) => ({ to: `queued-${n}@example.com`, subject: 'Your sign-in link', text: 'link' });
      for (let n = 0; n < MAIL_QUEUE_LIMIT; n++) await mailer.send(message(n));
      const refused = await mailer.send(message(MAIL_QUEUE_LIMIT)).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(AppError);
      expect((refused as AppError).code).toBe('upstream_unavailable');
    } finally {
      await mailer.close!(0);
    }
  });
});

describe('e-mail without SMTP_URL', () => {
  const message = { to: 'reader@example.com', subject: 'Your sign-in link', text: 'Sign in:\n\nhttp://localhost:3000/browse?token=secret-token\n\nThe link works once.\n' };

  async function logOf(level: string): Promise<{ level: number; msg: string }[]> {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _encoding, done) => (lines.push(...String(chunk).split('\n').filter(Boolean)), done()) });
    const mailer = createMailer({ smtpUrl: undefined, from: 'directory@example.com', logger: pino({ level }, sink) });
    await mailer.send(message);
    return lines.map((line) => JSON.parse(line) as { level: number; msg: string });
  }

  it('writes the message as one readable line at info, the link whole', async () => {
    const entries = await logOf('info');
    expect(entries.map((entry) => entry.msg)).toEqual([
      SMTP_NOT_SET_WARNING,
      'e-mail to reader@example.com, "Your sign-in link": Sign in: http://localhost:3000/browse?token=secret-token The link works once.',
    ]);
    expect(entries[1]!.level).toBe(30);
  });

  it('keeps the link out of a log set above info', async () => {
    const entries = await logOf('warn');
    expect(entries.map((entry) => entry.msg)).toEqual([SMTP_NOT_SET_WARNING]);
  });
});
