/// <reference lib="dom" />
import { mkdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../factories/browser.js';
import { startTestApp, type TestApp } from '../harness.js';

const ARTIFACTS = 'test-artifacts';

/** Every answer of 400 or more the page got (a missing favicon shows here), and every script error. */
function watch(page: Page): { failures: string[] } {
  const failures: string[] = [];
  page.on('response', (response) => {
    if (response.status() >= 400) failures.push(`${response.status()} ${new URL(response.url()).pathname}`);
  });
  page.on('pageerror', (error) => failures.push(`script error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') failures.push(`console: ${message.text()}`);
  });
  return { failures };
}

describe('the front page / in headless Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    t = await startTestApp({ jobs: false });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    base = `http://127.0.0.1:${address.port}`;
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('says what this is, links every page and document, and shows the version and health of this server', async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const { failures } = watch(page);
    const response = await page.goto(`${base}/`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("default-src 'self'");
    await expect(page.title()).resolves.toBe('Agent gateway');
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Agent gateway');

    const status = (await t.rest({ method: 'GET', url: '/api/status' })).json();
    const facts = page.getByTestId('server-facts');
    await facts.getByText(status.version, { exact: true }).waitFor();
    await expect(page.getByTestId('server-state').textContent()).resolves.toContain(`Version ${status.version}`);
    const behind = Object.entries(status.services as Record<string, { status: string }>).filter(([, service]) => service.status !== 'operational');
    await expect(facts.locator('[data-field="status"]').textContent()).resolves.toBe(
      behind.length > 0 ? `${status.status} (${behind.map(([name]) => name.replaceAll('_', ' ')).join(', ')})` : status.status,
    );
    await expect(facts.locator('[data-field="database"]').textContent()).resolves.toMatch(/^operational, [\d.]+ ms$/);

    // The two set-up commands, and the first request with this server's own address.
    await expect(page.getByTestId('setup-commands').textContent()).resolves.toBe('npm ci\nnpm start');
    await expect(page.locator('pre').nth(1).textContent()).resolves.toContain(`curl -s -X POST ${base}/api/agents`);

    const hrefs = await page.locator('a[href^="/"]').evaluateAll((links) => links.map((link) => link.getAttribute('href')!));
    expect(new Set(hrefs)).toEqual(new Set(['/browse', '/console', '/prices', '/graphql', '/openapi.json', '/api/status', '/healthz', '/readyz']));
    // Each link answers 200 as a browser opens it (the explorer for /graphql).
    for (const href of new Set(hrefs)) {
      const opened = await fetch(`${base}${href}`, { headers: { accept: 'text/html,application/json' } });
      expect({ href, status: opened.status }).toEqual({ href, status: 200 });
    }
    await page.screenshot({ path: `${ARTIFACTS}/front-page.png`, fullPage: true });
    expect(failures).toEqual([]);
    await page.close();
  }, 60_000);

  it('says so when the status report cannot be had', async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    await page.route('**/api/status', (route) => route.fulfill({ status: 503, body: '{}', contentType: 'application/json' }));
    await page.goto(`${base}/`);
    await page.getByText('The status report is unavailable: /api/status answered 503').waitFor();
    await expect(page.locator('[data-field="version"]').textContent()).resolves.toBe('unknown');
    await page.close();
  }, 60_000);

  it('serves an icon, so no page (nor a JSON answer opened in the browser) logs a 404 for /favicon.ico', async () => {
    for (const path of ['/', '/browse', '/console', '/prices', '/graphql']) {
      const page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
      const { failures } = watch(page);
      await page.goto(`${base}${path}`, { waitUntil: 'networkidle' });
      expect({ path, failures }).toEqual({ path, failures: [] });
      // Headless Chromium does not fetch icons itself: each one the page names is fetched here.
      const icons = await page.locator('link[rel="icon"]').evaluateAll((links) => links.map((link) => (link as HTMLLinkElement).href));
      expect(icons.map((href) => new URL(href).pathname).sort()).toEqual(['/favicon.ico', '/favicon.svg']);
      for (const href of icons) {
        const icon = await page.request.get(href);
        expect({ href, status: icon.status(), type: icon.headers()['content-type'] }).toEqual({ href, status: 200, type: expect.stringMatching(/^image\//) });
      }
      await page.close();
    }
    // What a browser asks for by itself, on /openapi.json say.
    const icon = await fetch(`${base}/favicon.ico`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toMatch(/^image\/(x-icon|vnd\.microsoft\.icon)$/);
    // An ICO container: reserved 0, type 1 (icon).
    expect([...new Uint8Array(await icon.arrayBuffer()).slice(0, 4)]).toEqual([0, 0, 1, 0]);
  }, 120_000);
});
