import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TestClock } from '../../factories/clock.js';
import { startSmtpServer } from '../../factories/smtp.js';
import { toolBody } from '../../factories/users.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

describe('magic-link sign-in over real SMTP', () => {
  let t: TestApp;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  const clock = new TestClock(new Date('2030-01-01T10:00:00Z'));
  let address = 0;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await startTestApp({ clock, jobs: false, env: { SMTP_URL: smtp.url, PUBLIC_URL: 'https://gateway.example.com', MAIL_FROM: 'directory@example.com' } });
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  const request = (email: string) =>
    t.rest({ method: 'POST', url: '/api/auth/magic-link', payload: { email }, remoteAddress: `10.1.1.${++address}` });
  const verify = (token: string) => t.rest({ method: 'POST', url: '/api/auth/verify', payload: { token }, remoteAddress: `10.1.2.${++address}` });

  // Mail leaves after the answer: wait for a link this test has not read yet.
  const read = new Set<string>();
  async function linkFor(email: string): Promise<URL> {
    const deadline = Date.now() + 5000;
    for (;;) {
      const links = smtp.mails
        .filter((candidate) => candidate.to.includes(email))
        .map((mail) => /https:\/\/gateway\.example\.com\/browse\?token=[\w%-]+/.exec(mail.text)?.[0]);
      const link = links.find((candidate) => candidate !== undefined && !read.has(candidate));
      if (link) {
        read.add(link);
        return new URL(link);
      }
      if (Date.now() > deadline) throw new Error(`no link reached ${email}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('sends a link to /browse, redeems it once for a 7-day JWT that signs writes', async () => {
    const requested = await request('Carol@Example.com');
    expect(requested.statusCode).toBe(200);
    expect(requested.json()).toEqual({ success: true, message: expect.any(String) });
    const link = await linkFor('carol@example.com');
    expect(link.pathname).toBe('/browse');
    const token = link.searchParams.get('token')!;

    const verified = await verify(token);
    expect(verified.statusCode).toBe(200);
    const session = verified.json();
    expect(session).toEqual({
      success: true,
      token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      expires_at: '2030-01-08T10:00:00.000Z',
      user: { id: expect.any(String), email: 'carol@example.com' },
    });
    expect(await t.query('select token_hash from magic_link_tokens where token_hash = $1', [token])).toEqual([]);

    const reused = await verify(token);
    expect(reused.statusCode).toBe(401);
    expect(reused.json()).toEqual({ success: false, message: expect.any(String) });

    const submitted = await t.rest({ method: 'POST', url: '/api/tools', headers: bearer(session.token), payload: toolBody() });
    expect(submitted.statusCode).toBe(201);

    // A second sign-in finds the same account.
    await request('carol@example.com');
    const again = (await verify((await linkFor('carol@example.com')).searchParams.get('token')!)).json();
    expect(again.user.id).toBe(session.user.id);
  });

  it('answers the same for an address it has never seen (no account enumeration)', async () => {
    const response = await request('nobody-yet@example.com');
    expect(response.statusCode).toBe(200);
    expect(response.json().message).toBe((await request('carol@example.com')).json().message);
  });

  it('refuses an expired link, an unknown token and a malformed address', async () => {
    await request('late@example.com');
    const token = (await linkFor('late@example.com')).searchParams.get('token')!;
    clock.set('2030-01-01T10:16:00Z');
    try {
      expect((await verify(token)).statusCode).toBe(401);
    } finally {
      clock.set('2030-01-01T10:00:00Z');
    }
    expect((await verify('made-up-token')).statusCode).toBe(401);
    for (const email of ['not-an-email', 'a@b', 'two@@example.com', 'spaces in@example.com', 'a,b@example.com', '<a@example.com>', 'a@example.com,b@example.com', '"quoted"@example.com']) {
      const response = await request(email);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({ success: false, message: expect.stringMatching(/email/), errors: { email: expect.any(String) } });
    }
    // Ordinary addresses still pass: plus tags, dots, hyphens, subdomains, upper case (stored lower).
    for (const email of ['first.last+tag@example.com', 'x-y@mail.example.co.uk', 'Upper@Example.com']) {
      expect((await request(email)).statusCode).toBe(200);
    }
  });
});
