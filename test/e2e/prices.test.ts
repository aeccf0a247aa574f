/// <reference lib="dom" />
import { mkdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../factories/browser.js';
import { startTestApp, type TestApp } from '../harness.js';

const ADMIN_TOKEN = 'admin-token-for-the-prices-page-0123';

describe('/prices in headless Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    await mkdir('test-artifacts', { recursive: true });
    t = await startTestApp({ jobs: false, env: { ADMIN_TOKEN } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    base = `http://127.0.0.1:${address.port}`;
    // A fresh snapshot for the H100 at two providers, on top of the bundled reference snapshot.
    await t.rest({
      method: 'POST',
      url: '/api/v1/prices/snapshots',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { rows: [{ slug: 'h100', provider: 'lambda', spot_price_usd: null, on_demand_price_usd: 2.49 }, { slug: 'h100', provider: 'vast', spot_price_usd: 1.2, on_demand_price_usd: 1.6 }] },
    });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('shows every current price in a sortable table and a spot vs on-demand chart per GPU', async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const hosts = new Set<string>();
    page.on('request', (request) => hosts.add(new URL(request.url()).host));
    await page.goto(`${base}/prices`);
    const table = page.getByTestId('prices-table');
    await table.waitFor();
    const feed = (await t.rest({ method: 'GET', url: '/api/v1/prices' })).json();
    expect(await table.locator('tbody tr').count()).toBe(feed.prices.length);

    // Sorted by on-demand price, cheapest first, by default; a click reverses it.
    const onDemand = async () =>
      (await table.locator('tbody tr td:nth-child(4)').allTextContents()).filter((text) => text !== '—').map((text) => Number(text.slice(1)));
    const ascending = await onDemand();
    expect(ascending).toEqual([...ascending].sort((a, b) => a - b));
    await page.getByRole('button', { name: /On-demand/ }).click();
    const descending = await onDemand();
    expect(descending).toEqual([...ascending].sort((a, b) => b - a));
    await page.getByRole('button', { name: /^Provider/ }).click();
    expect(await table.locator('th[aria-sort="ascending"]').textContent()).toContain('Provider');

    // The chart for the H100: one bar per known price.
    const h100 = feed.prices.filter((row: { slug: string }) => row.slug === 'h100');
    const bars = h100.reduce((count: number, row: { spot_price_usd: number | null; on_demand_price_usd: number | null }) => count + (row.spot_price_usd === null ? 0 : 1) + (row.on_demand_price_usd === null ? 0 : 1), 0);
    expect(await page.locator('[data-testid="chart"] rect').count()).toBe(bars);
    await page.getByLabel('GPU').selectOption('rtx-4090');
    const rtx = feed.prices.filter((row: { slug: string }) => row.slug === 'rtx-4090');
    await expect(page.locator('[data-testid="chart"] text').allTextContents()).resolves.toEqual(rtx.map((row: { provider: string }) => row.provider).sort());
    await page.screenshot({ path: 'test-artifacts/prices.png', fullPage: true });
    expect([...hosts]).toEqual([new URL(base).host]);
    await page.close();
  }, 60_000);
});
