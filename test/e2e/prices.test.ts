/// <reference lib="dom" />
import { mkdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { REFERENCE_SNAPSHOT } from '../../src/modules/prices/reference-snapshot.js';
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
    // Three snapshots of the H100 at two providers over the last three days, on top of the bundled reference snapshot.
    const day = 24 * 60 * 60 * 1000;
    for (const [daysAgo, lambda, vast] of [[3, 2.79, 1.7], [2, 2.59, 1.5], [0, 2.49, 1.6]] as const) {
      const posted = await t.rest({
        method: 'POST',
        url: '/api/v1/prices/snapshots',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        payload: {
          taken_at: new Date(Date.now() - daysAgo * day - 60_000).toISOString(),
          rows: [{ slug: 'h100', provider: 'lambda', spot_price_usd: null, on_demand_price_usd: lambda }, { slug: 'h100', provider: 'vast', spot_price_usd: 1.2, on_demand_price_usd: vast }],
        },
      });
      expect(posted.statusCode).toBe(201);
    }
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('shows every current price in a sortable table, a spot vs on-demand chart and the price history per GPU', async () => {
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

    // The chart for the H100: one bar per known price, each with its value written beside it, on a dollar axis.
    const h100 = feed.prices.filter((row: { slug: string }) => row.slug === 'h100');
    const values = h100.flatMap((row: { spot_price_usd: number | null; on_demand_price_usd: number | null }) => [row.spot_price_usd, row.on_demand_price_usd]).filter((value: number | null) => value !== null);
    const chart = page.getByTestId('chart');
    expect(await chart.locator('rect[data-kind]').count()).toBe(values.length);
    expect((await chart.locator('text.value:not(.missing)').allTextContents()).sort()).toEqual(values.map((value: number) => `$${value.toFixed(2)}`).sort());
    expect(await chart.locator('.tick text').allTextContents()).toEqual(expect.arrayContaining(['$0']));
    expect(await chart.locator('.tick text').count()).toBeGreaterThanOrEqual(3);

    // The history: a line per provider through its three snapshots, the newest price in the legend.
    const history = page.getByTestId('history-chart');
    await history.waitFor();
    expect(await history.locator('.series').evaluateAll((series) => series.map((line) => [line.getAttribute('data-provider'), line.querySelectorAll('circle').length]))).toEqual([
      ['lambda', 3],
      ['vast', 3],
    ]);
    await expect(page.getByTestId('history-legend').textContent()).resolves.toMatch(/lambda \$2\.49.*vast \$1\.60/);
    // Its axes: dollars from $0 past the highest price, and three times from the first snapshot to now.
    const dollars = await history.locator('.tick text').allTextContents();
    expect({ first: dollars[0], last: Number(dollars.at(-1)!.slice(1)) >= 2.79 }).toEqual({ first: '$0', last: true });
    expect(await history.locator('text.time').count()).toBe(3);
    await page.screenshot({ path: 'test-artifacts/prices.png', fullPage: true });
    await page.getByRole('combobox', { name: 'Price', exact: true }).selectOption('spotPriceUsd');
    expect(await history.locator('.series').evaluateAll((series) => series.map((line) => line.getAttribute('data-provider')))).toEqual(['vast']);

    // The bundled reference snapshot says what it is, rather than "expired".
    await expect(page.getByTestId('reference-notice').textContent()).resolves.toMatch(/from the reference\s+snapshot bundled with the gateway/);
    const referenceRows = feed.prices.filter((row: { last_seen: string }) => row.last_seen === new Date(REFERENCE_SNAPSHOT.takenAt).toISOString()).length;
    expect(referenceRows).toBeGreaterThan(0);
    expect(await table.locator('.freshness-reference').count()).toBe(referenceRows);
    expect(await table.locator('.freshness-expired').count()).toBe(0);

    await page.getByRole('combobox', { name: 'GPU', exact: true }).selectOption('rtx-4090');
    const rtx = feed.prices.filter((row: { slug: string }) => row.slug === 'rtx-4090');
    await expect(page.locator('[data-testid="chart"] text.provider-label').allTextContents()).resolves.toEqual(rtx.map((row: { provider: string }) => row.provider).sort());
    await page.getByTestId('history-empty').waitFor();
    expect([...hosts]).toEqual([new URL(base).host]);
    await page.close();
  }, 60_000);
});
