/// <reference lib="dom" />
import { mkdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../factories/agents.js';
import { launchChromium } from '../factories/browser.js';
import { startTestApp, type TestApp } from '../harness.js';

const ARTIFACTS = 'test-artifacts';
/** A common phone's width in CSS pixels (iPhone 12–15). */
const PHONE_WIDTH = 390;
const ADMIN_TOKEN = 'admin-token-for-the-phone-layout-0123';

/** How far the document is wider than the screen (0: nothing sticks out, no sideways scrolling of the page). */
const pageOverflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/** A box that scrolls sideways by itself: wider content, overflow-x auto or scroll, and what its cue says. */
async function scrollBox(box: Locator) {
  return box.evaluate((element) => ({
    overflowX: getComputedStyle(element).overflowX,
    scrollable: element.scrollWidth > element.clientWidth,
    withinScreen: element.getBoundingClientRect().right <= document.documentElement.clientWidth + 0.5,
    more: element.getAttribute('data-more') ?? '',
  }));
}

/** The tab bar at the phone's width: it scrolls, and says which way there is more, at each end. */
async function expectScrollableTabs(page: Page, name: string) {
  const tabs = page.getByRole('navigation', { name: 'Sections' });
  const atStart = await scrollBox(tabs);
  expect({ name, ...atStart }).toEqual({ name, overflowX: 'auto', scrollable: true, withinScreen: true, more: 'right' });
  await tabs.evaluate((element) => element.scrollTo({ left: element.scrollWidth }));
  await expect(poll(() => tabs.getAttribute('data-more'))).resolves.toBe('left');
  await tabs.evaluate((element) => element.scrollTo({ left: 0 }));
  await expect(poll(() => tabs.getAttribute('data-more'))).resolves.toBe('right');
}

/** The value `read` settles on within 2 s (a scroll event is handled after the frame). */
async function poll<T>(read: () => Promise<T>): Promise<T> {
  let last = await read();
  for (let i = 0; i < 20; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const next = await read();
    if (next === last) return next;
    last = next;
  }
  return last;
}

describe(`every page on a ${PHONE_WIDTH} px wide phone`, () => {
  let t: TestApp;
  let browser: Browser;
  let phone: BrowserContext;
  let base: string;
  let agent: AgentWithToken;

  const open = async (path: string) => {
    const page = await phone.newPage();
    await page.goto(`${base}${path}`);
    return page;
  };
  const shot = (page: Page, name: string) => page.screenshot({ path: `${ARTIFACTS}/${name}-${PHONE_WIDTH}px.png`, fullPage: true });

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    t = await startTestApp({ jobs: false, env: { ADMIN_TOKEN } });
    // Two days of H100 prices at two providers, for the history chart.
    for (const [hoursAgo, lambda, vast] of [[48, 2.79, 1.7], [24, 2.59, 1.5], [0, 2.49, 1.6]] as const) {
      await t.rest({
        method: 'POST',
        url: '/api/v1/prices/snapshots',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        payload: {
          taken_at: new Date(Date.now() - hoursAgo * 3_600_000 - 60_000).toISOString(),
          rows: [{ slug: 'h100', provider: 'lambda', spot_price_usd: null, on_demand_price_usd: lambda }, { slug: 'h100', provider: 'vast', spot_price_usd: 1.2, on_demand_price_usd: vast }],
        },
      });
    }
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    base = `http://127.0.0.1:${address.port}`;
    const root = await bootstrapAgent(t, 'root');
    agent = await createAgent(t, root, 'Phone agent');
    browser = await launchChromium();
    phone = await browser.newContext({ viewport: { width: PHONE_WIDTH, height: 844 }, deviceScaleFactor: 1, isMobile: true, hasTouch: true, timezoneId: 'UTC', locale: 'en-GB' });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('/ fits the screen', async () => {
    const page = await open('/');
    await page.getByTestId('server-facts').locator('[data-field="version"]').filter({ hasNotText: '…' }).waitFor();
    expect(await pageOverflow(page)).toBe(0);
    await shot(page, 'front-page');
    await page.close();
  });

  it('/browse fits the screen, its tab bar scrolls and shows there is more', async () => {
    const page = await open('/browse');
    await page.getByRole('navigation', { name: 'Sections' }).waitFor();
    await page.locator('main').getByText(/tools?|No tools/).first().waitFor();
    expect(await pageOverflow(page)).toBe(0);
    await expectScrollableTabs(page, '/browse');
    await shot(page, 'browse');
    // The tab chosen last scrolls into view.
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Submit a tool' }).click();
    await expect(poll(() => page.getByRole('navigation', { name: 'Sections' }).getAttribute('data-more'))).resolves.toBe('left');
    expect(await pageOverflow(page)).toBe(0);
    await page.close();
  });

  it('/console fits the screen on every tab, its tab bar scrolls and shows there is more', async () => {
    const page = await open('/console');
    await page.getByLabel('Agent token').fill(agent.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('live-state').filter({ hasText: 'Live' }).waitFor();
    expect(await pageOverflow(page)).toBe(0);
    await expectScrollableTabs(page, '/console');
    await shot(page, 'console');
    // The calendar's new parts: the hold button beside Create, and a booking's Move form, inside the screen.
    const withinScreen = (locator: Locator) => locator.evaluate((element) => element.getBoundingClientRect().right <= document.documentElement.clientWidth + 0.5);
    await expect(withinScreen(page.getByRole('button', { name: 'Hold 5 minutes' }))).resolves.toBe(true);
    for (const name of ['Working hours', 'Proposals', 'Availability', 'Webhooks', 'Agents', 'Calendar feeds']) {
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true }).click();
      await page.getByRole('heading', { level: 2 }).first().waitFor();
      if (name === 'Working hours') {
        // Every field of the editor (a day's intervals, a date, the limits) fits beside or under its label.
        await page.getByTestId('rules-form').waitFor();
        await page.getByRole('button', { name: 'Add hours on Monday' }).click();
        await page.getByRole('button', { name: '+ date' }).click();
        const fields = await page.getByTestId('rules-form').locator('input, select, button').all();
        expect(fields.length).toBeGreaterThan(30);
        const outside = [];
        for (const field of fields) if (!(await withinScreen(field))) outside.push(await field.evaluate((element) => element.outerHTML.slice(0, 80)));
        expect(outside).toEqual([]);
        await shot(page, 'console-working-hours');
      }
      expect({ name, overflow: await pageOverflow(page) }).toEqual({ name, overflow: 0 });
    }
    await page.close();
  });

  it('/prices fits the screen: the table scrolls in its own box, the charts fit', async () => {
    const page = await open('/prices');
    const table = page.getByTestId('prices-table');
    await table.waitFor();
    await page.getByTestId('history-chart').waitFor();
    expect(await pageOverflow(page)).toBe(0);
    const box = await scrollBox(page.locator('.table-scroll'));
    expect({ overflowX: box.overflowX, withinScreen: box.withinScreen }).toEqual({ overflowX: 'auto', withinScreen: true });
    expect({ scrollable: box.scrollable, more: box.more }).toEqual({ scrollable: true, more: 'right' });
    // Scrolled to its end, the GPU column is still there beside the prices.
    await page.locator('.table-scroll').evaluate((element) => element.scrollTo({ left: element.scrollWidth }));
    await expect(poll(() => page.locator('.table-scroll').getAttribute('data-more'))).resolves.toBe('left');
    const [boxLeft, gpuLeft] = await page.locator('.table-scroll').evaluate((element) => [
      element.getBoundingClientRect().left,
      element.querySelector('tbody td:first-child')!.getBoundingClientRect().left,
    ]);
    expect(Math.round(gpuLeft - boxLeft)).toBeLessThanOrEqual(1);
    await page.locator('.table-scroll').evaluate((element) => element.scrollTo({ left: 0 }));
    for (const chart of await page.locator('figure svg').all()) {
      const right = await chart.evaluate((element) => element.getBoundingClientRect().right);
      expect(right).toBeLessThanOrEqual(PHONE_WIDTH);
    }
    await shot(page, 'prices');
    // The charts alone, at the size a phone shows them.
    await page.screenshot({ path: `${ARTIFACTS}/prices-charts-${PHONE_WIDTH}px.png`, fullPage: true, clip: { x: 0, y: 0, width: PHONE_WIDTH, height: 1400 } });
    await page.close();
  });

  it('/graphql (the explorer) fits the screen: the response sits under the editors, as wide as they are, and shows the example\'s answer', async () => {
    const page = await open('/graphql');
    await page.locator('.graphiql-query-editor .monaco-editor').waitFor({ timeout: 20_000 });
    expect(await pageOverflow(page)).toBe(0);
    const editors = (await page.locator('.graphiql-editors').boundingBox())!;
    const response = (await page.locator('.graphiql-response').boundingBox())!;
    expect({ below: response.y >= editors.y + editors.height - 1, asWide: response.width >= editors.width * 0.9, tallEnough: response.height >= 150 }).toEqual({
      below: true,
      asWide: true,
      tallEnough: true,
    });
    await page.locator('.graphiql-query-editor .monaco-editor').click();
    await page.keyboard.press('ControlOrMeta+Enter');
    await page.locator('.graphiql-response').filter({ hasText: '"onDemandPriceUsd"' }).waitFor({ timeout: 15_000 });
    expect(await pageOverflow(page)).toBe(0);
    await shot(page, 'explorer');
    await page.close();
  }, 60_000);
});
