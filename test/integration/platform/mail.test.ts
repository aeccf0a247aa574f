import { once } from 'node:events';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AppError } from '../../../src/platform/errors.js';
import { createLogger } from '../../../src/platform/logger.js';
import { createMailer, MAIL_QUEUE_LIMIT } from '../../../src/platform/mail/mailer.js';
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
