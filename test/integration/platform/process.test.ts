import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { freePort } from '../../../src/platform/db/embedded-postgres.js';
import { errorLines, SMTP_NOT_SET_WARNING, startServer, waitFor } from '../../factories/server-process.js';
import { withoutCost } from '../../harness.js';

async function bootstrap(port: number) {
  const response = await fetch(`http://127.0.0.1:${port}/api/agents`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'root', bootstrap: true }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, string> };
}

async function portIsClosed(port: number): Promise<boolean> {
  return fetch(`http://127.0.0.1:${port}/healthz`).then(
    () => false,
    () => true,
  );
}

describe('the server process', () => {
  const dirs: string[] = [];
  const afterFailure: (() => unknown)[] = [];
  afterAll(async () => {
    for (const cleanUp of afterFailure) cleanUp();
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('runs on an embedded database that survives a restart, and stops cleanly on SIGTERM', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'gateway-process-'));
    dirs.push(dataDir);

    const port = await freePort();
    const first = startServer({ PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir });
    // A failed expectation must not leave the server running (jest would wait for it forever).
    afterFailure.push(() => first.child.exitCode === null && first.child.kill('SIGKILL'));
    await waitFor(first, 'gateway ready');
    const claimed = await bootstrap(port);
    expect(claimed.status).toBe(201);
    // Without SMTP_URL the sign-in link is one readable line of the log, and it signs in.
    const asked = await fetch(`http://127.0.0.1:${port}/api/auth/magic-link`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'reader@example.com' }) });
    expect(asked.status).toBe(200);
    await waitFor(first, '/browse?token=');
    const mailLines = first.output().split('\n').filter((line) => line.includes('/browse?token='));
    expect(mailLines).toHaveLength(1);
    const mailEntry = JSON.parse(mailLines[0]!) as { level: number; msg: string; text?: string };
    expect(mailEntry.level).toBe(30);
    expect(mailEntry.text).toBeUndefined();
    expect(mailEntry.msg).toMatch(new RegExp(`^e-mail to reader@example\\.com, "Your sign-in link": Sign in to the tool directory: http://localhost:${port}/browse\\?token=\\S+ The link works once and expires in 15 minutes\\. If you did not ask for it, ignore this e-mail\\.$`));
    expect(mailLines[0]).not.toContain('\\n');
    const token = new URL(/http:\S+/.exec(mailEntry.msg)![0]).searchParams.get('token');
    const verified = await fetch(`http://127.0.0.1:${port}/api/auth/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
    expect(verified.status).toBe(200);

    const postgresPort = Number(/"component":"embedded-postgres","port":(\d+)/.exec(first.output())?.[1]);
    expect(postgresPort).toBeGreaterThan(0);

    first.child.kill('SIGTERM');
    expect({ code: await first.exited, errors: errorLines(first.output()) }).toEqual({ code: 0, errors: [] });
    expect(first.output()).toContain('"msg":"stopped"');
    // Without SMTP_URL, one loud line at start says where sign-in links go (the contract: the log).
    expect(first.output().split('\n').filter((line) => line.includes(SMTP_NOT_SET_WARNING))).toHaveLength(1);
    expect(await portIsClosed(port)).toBe(true);
    // The embedded PostgreSQL went down with the process.
    expect(await portIsClosed(postgresPort)).toBe(true);

    const second = startServer({ PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir });
    try {
      await waitFor(second, 'gateway ready');
      expect((await bootstrap(port)).status).toBe(409);
      const me = await fetch(`http://127.0.0.1:${port}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${claimed.body.public_token}` },
        body: JSON.stringify({ query: '{ me { id } }' }),
      });
      expect(withoutCost(await me.json())).toEqual({ data: { me: { id: claimed.body.id } } });
    } finally {
      second.child.kill('SIGTERM');
      expect({ code: await second.exited, errors: errorLines(second.output()) }).toEqual({ code: 0, errors: [] });
    }
  }, 120_000);
});
