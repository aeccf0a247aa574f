/// <reference lib="dom" />
import { mkdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../factories/browser.js';
import { freePort } from '../../src/platform/db/embedded-postgres.js';
import { Mailbox } from '../factories/mailbox.js';
import { startSmtpServer } from '../factories/smtp.js';
import { signIn, submitTool } from '../factories/users.js';
import { startTestApp, type TestApp } from '../harness.js';
import { VoteDocument } from '../../src/web/generated/pages/graphql.js';

const ARTIFACTS = 'test-artifacts';

describe('/browse in headless Chromium', () => {
  let t: TestApp;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let browser: Browser;
  let page: Page;
  let base: string;
  const hostsContacted = new Set<string>();

  const shot = (name: string) => page.screenshot({ path: `${ARTIFACTS}/browse-${name}.png`, fullPage: true });

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    smtp = await startSmtpServer();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await startTestApp({ jobs: false, env: { SMTP_URL: smtp.url, PUBLIC_URL: base } });
    await t.app.listen({ port, host: '127.0.0.1' });

    // Something to browse: 15 tools over two categories, one of them voted up.
    const mailbox = new Mailbox();
    const seeder = await startTestApp({ jobs: false, mailer: mailbox, databaseUrl: t.databaseUrl });
    const author = await signIn(seeder, mailbox);
    for (let i = 1; i <= 15; i++) {
      await submitTool(seeder, author, {
        name: `Seeded Tool ${String(i).padStart(2, '0')}`,
        category_id: i % 2 ? 1 : 3,
        pricing_model: 'freemium',
        capabilities: ['summarize'],
        api_endpoint: `https://api.seeded-${i}.example.com`,
        auth_method: 'oauth',
      });
    }
    await seeder.app.close();
    await seeder.orm.close(true);

    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('request', (request) => hostsContacted.add(new URL(request.url()).host));
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await smtp?.close();
  });

  it('browses tools as cards, filters by category, sorts and pages with the state in the URL', async () => {
    await page.goto(`${base}/browse`);
    await page.getByTestId('tool-card').first().waitFor();
    expect(await page.getByTestId('tool-card').count()).toBe(12);
    await expect(page.getByTestId('page-info').textContent()).resolves.toMatch(/Page 1 of 2 · 15 tools/);
    await shot('list');

    await page.getByLabel('Category').selectOption('research');
    await page.waitForURL(/category=research/);
    await page.getByTestId('page-info').filter({ hasText: '7 tools' }).waitFor();
    const badges = await page.locator('.card .badge:first-child').allTextContents();
    expect(badges.every((badge) => badge === 'Research')).toBe(true);

    await page.getByLabel('Sort').selectOption('newest');
    await page.waitForURL(/sort=newest/);
    await page.getByLabel('Category').selectOption('');
    await page.getByRole('button', { name: 'Next →' }).click();
    await page.waitForURL(/page=2/);
    await page.getByTestId('page-info').filter({ hasText: 'Page 2 of 2' }).waitFor();
    expect(await page.getByTestId('tool-card').count()).toBe(3);

    // The URL alone restores the view.
    await page.reload();
    await page.getByTestId('page-info').filter({ hasText: 'Page 2 of 2' }).waitFor();
  });

  it('opens a tool’s details', async () => {
    await page.goto(`${base}/browse?sort=newest`);
    await page.getByRole('link', { name: 'Seeded Tool 15' }).click();
    await page.getByRole('heading', { name: 'Seeded Tool 15' }).waitFor();
    const details = await page.locator('.details dl').innerText();
    expect(details).toContain('summarize');
    expect(details).toContain('freemium');
    expect(details).toContain('https://api.seeded-15.example.com');
    expect(details).toContain('oauth');
    await shot('details');
  });

  it('shows the leaderboard and the stats', async () => {
    await page.goto(`${base}/browse`);
    await page.getByRole('link', { name: 'Leaderboard' }).click();
    await page.getByRole('heading', { name: 'Submitted by humans' }).waitFor();
    await page.getByRole('link', { name: 'Stats' }).click();
    await page.getByTestId('stats').waitFor();
    expect(await page.getByTestId('stats').innerText()).toMatch(/Tools\s+15/);
    await shot('stats');
  });

  it('signs in through the e-mailed link, votes, submits, refuses a duplicate URL and signs out', async () => {
    await page.goto(`${base}/browse`);
    await page.getByLabel('E-mail address').fill('dora@example.com');
    await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
    await page.getByText('Check dora@example.com').waitFor();

    const deadline = Date.now() + 10_000;
    let link: string | undefined;
    while (!link && Date.now() < deadline) {
      link = /http:\/\/127\.0\.0\.1:\d+\/browse\?token=[\w%-]+/.exec(smtp.mails.at(-1)?.text ?? '')?.[0];
      if (!link) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(link).toBeDefined();
    await page.goto(link!);
    await page.getByTestId('viewer-email').filter({ hasText: 'dora@example.com' }).waitFor();
    expect(page.url()).not.toContain('token=');
    expect(await page.evaluate(() => localStorage.getItem('lp_token'))).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    await shot('signed-in');

    // Vote: the count moves at once and matches the server.
    const firstCard = page.getByTestId('tool-card').first();
    const before = Number(await firstCard.getByTestId('vote-count').textContent());
    // The button flips before the server answers (optimistic): the row is read once the vote is answered.
    // The page sends the document's id (the manifest's), not its text.
    const voteId = VoteDocument.__meta__!.hash as string;
    const voteAnswered = page.waitForResponse((response) => response.url().endsWith('/graphql') && (response.request().postData() ?? '').includes(voteId));
    await firstCard.getByRole('button', { name: /^Vote for/ }).click();
    await firstCard.getByRole('button', { name: /^Remove your vote/ }).waitFor();
    await voteAnswered;
    expect(Number(await firstCard.getByTestId('vote-count').textContent())).toBe(before + 1);
    const [row] = await t.query<{ n: number }>('select count(*)::int as n from votes');
    expect(row!.n).toBe(1);

    // Submit: the form checks like the server, then the server answers.
    await page.getByRole('link', { name: 'Submit a tool' }).click();
    await page.getByLabel('Name').fill('Browser Made');
    await page.getByLabel('URL').fill('not a url');
    await page.getByLabel('Description').fill('Submitted from the page.');
    await page.getByLabel('Category').selectOption({ label: 'Writing' });
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.locator('#e-url').filter({ hasText: 'absolute http or https URL' }).waitFor();
    await page.getByLabel('URL').fill('https://browser-made.example.com');
    await page.getByLabel('Pricing model').selectOption('free');
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.getByRole('heading', { name: 'Browser Made' }).waitFor();
    await page.getByText('Thank you: the tool is listed.').waitFor();

    await page.getByRole('link', { name: 'Submit a tool' }).click();
    await page.getByLabel('Name').fill('Browser Made Again');
    await page.getByLabel('URL').fill('HTTPS://browser-made.example.com/');
    await page.getByLabel('Description').fill('Same URL.');
    await page.getByLabel('Category').selectOption({ label: 'Writing' });
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.locator('#e-url').filter({ hasText: 'already submitted' }).waitFor();
    await shot('duplicate-url');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out.').waitFor();
    expect(await page.evaluate(() => localStorage.getItem('lp_token'))).toBeNull();
    await page.getByLabel('E-mail address').waitFor();
  }, 60_000);

  it('returns a visitor with a rejected token to the signed-out state with a message', async () => {
    // A returning visitor: a fresh page whose storage holds the token before the page exists. (Setting it with
    // evaluate and reloading failed in a loaded CI run: the reloaded page started signed out without the message,
    // which it does only when it finds no token; the write and the reload travel to Chromium separately.)
    const returning = await browser.newPage({
      viewport: { width: 1280, height: 900 },
      storageState: { cookies: [], origins: [{ origin: base, localStorage: [{ name: 'lp_token', value: 'expired.or.forged' }] }] },
    });
    returning.on('request', (request) => hostsContacted.add(new URL(request.url()).host));
    // What /graphql answered and what the page shows, so a failure says which path it took.
    const answers: string[] = [];
    returning.on('response', (response) => {
      if (new URL(response.url()).pathname === '/graphql') answers.push(String(response.status()));
    });
    await returning.goto(`${base}/browse`);
    const alert = returning.getByRole('alert');
    await alert.waitFor({ timeout: 45_000 }).catch(async (error: unknown) => {
      const shown = await returning.evaluate(() => document.body.innerText.slice(0, 500)).catch(() => '(page not readable)');
      throw new Error(`no error notice; /graphql answered ${JSON.stringify(answers)}; the page shows: ${shown}`, { cause: error });
    });
    expect({ text: await alert.innerText(), answers }).toEqual({
      text: expect.stringContaining('Your session has expired or was rejected. Please sign in again.'),
      answers: expect.arrayContaining(['200']),
    });
    expect(await returning.evaluate(() => localStorage.getItem('lp_token'))).toBeNull();
    await returning.close();
  }, 60_000);

  it('fits a 360 px wide screen and is usable from the keyboard', async () => {
    const phone = await browser.newPage({ viewport: { width: 360, height: 740 } });
    phone.on('request', (request) => hostsContacted.add(new URL(request.url()).host));
    await phone.goto(`${base}/browse`);
    await phone.getByTestId('tool-card').first().waitFor();
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await phone.screenshot({ path: `${ARTIFACTS}/browse-360px.png`, fullPage: false });
    // Tab to the first vote button and press it: signed out, the page says why.
    let focused = '';
    for (let i = 0; i < 40 && !focused.startsWith('Vote for'); i++) {
      await phone.keyboard.press('Tab');
      focused = await phone.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? '');
    }
    expect(focused).toMatch(/^Vote for/);
    await phone.keyboard.press('Enter');
    await phone.getByText('Sign in to vote').waitFor();
    await phone.close();
  });

  it('serves the GraphQL explorer to a browser at /graphql, and it runs a query', async () => {
    const explorer = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const problems: string[] = [];
    explorer.on('pageerror', (error) => problems.push(error.message));
    explorer.on('request', (request) => hostsContacted.add(new URL(request.url()).host));
    await explorer.goto(`${base}/graphql`);
    await explorer.locator('.graphiql-query-editor .monaco-editor').waitFor({ timeout: 20_000 });
    // A new tab: the explorer opens on named examples, and GraphiQL sends the operation name it parsed
    // a moment after each keystroke, so a document replaced and run at once would run under the old name.
    await explorer.locator('.graphiql-tab-add').click();
    await explorer.locator('.graphiql-tab').nth(2).waitFor();
    await explorer.locator('.graphiql-query-editor .monaco-editor').click();
    await explorer.keyboard.type('{ stats { totalTools');
    await explorer.keyboard.press('Escape');
    await explorer.keyboard.press('ControlOrMeta+Enter');
    await explorer.locator('.graphiql-response').filter({ hasText: 'totalTools' }).waitFor({ timeout: 10_000 });
    await explorer.screenshot({ path: `${ARTIFACTS}/browse-explorer.png` });
    expect(problems).toEqual([]);
    await explorer.close();
  }, 40_000);

  it('contacted no host but the server itself', () => {
    expect([...hostsContacted]).toEqual([new URL(base).host]);
  });
});
