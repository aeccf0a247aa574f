/// <reference lib="dom" />
import { mkdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { bootstrapAgent, type AgentWithToken } from '../factories/agents.js';
import { launchChromium } from '../factories/browser.js';
import { startTestApp, type TestApp } from '../harness.js';

const ARTIFACTS = 'test-artifacts';

describe('the GraphQL explorer at /graphql in headless Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let agent: AgentWithToken;

  const editorText = (page: Page, editor: 'query' | 'headers') =>
    (editor === 'query' ? page.locator('.graphiql-query-editor') : page.getByRole('region', { name: 'Headers' }).getByRole('code')).evaluate((element) => {
      // Monaco renders only the visible lines, one .view-line each.
      return [...element.querySelectorAll('.view-line')].map((line) => line.textContent ?? '').join('\n').replace(/\u00a0/g, ' ');
    });

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    t = await startTestApp({ jobs: false });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    base = `http://127.0.0.1:${address.port}`;
    agent = await bootstrapAgent(t, 'explorer agent');
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('opens on an example document that runs, says where the token goes, and a second tab with the header it needs', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`${base}/graphql`);
    await page.locator('.graphiql-query-editor .monaco-editor').waitFor({ timeout: 20_000 });
    await expect(editorText(page, 'query')).resolves.toContain('Headers tab');
    await expect(editorText(page, 'query')).resolves.toContain('"Authorization": "Bearer agt_…"');
    await expect(editorText(page, 'query')).resolves.toContain('query GpuPrices');
    // The Headers editor is open below the query (GraphiQL marks the chosen one of Variables and Headers active).
    await expect(page.locator('.graphiql-editor-tools button[data-name="headers"]').getAttribute('class')).resolves.toMatch(/\bactive\b/);
    await expect(page.getByRole('region', { name: 'Headers' }).isVisible()).resolves.toBe(true);

    await page.locator('.graphiql-query-editor .monaco-editor').click();
    await page.keyboard.press('ControlOrMeta+Enter');
    await page.locator('.graphiql-response').filter({ hasText: '"onDemandPriceUsd"' }).waitFor({ timeout: 15_000 });
    await page.screenshot({ path: `${ARTIFACTS}/explorer.png` });

    // The second tab: the agent's query, and the header with the place for its token.
    await page.locator('.graphiql-tab').nth(1).click();
    await expect(editorText(page, 'query')).resolves.toContain('query Me');
    await expect(editorText(page, 'headers')).resolves.toContain('"Authorization": "Bearer agt_PASTE_YOUR_AGENT_TOKEN"');
    await page.getByRole('region', { name: 'Headers' }).getByRole('code').click();
    await page.keyboard.press('ControlOrMeta+a');
    // Cleared first: Monaco wraps a selection in the bracket typed over it. It closes the brace itself.
    await page.keyboard.press('Delete');
    await page.keyboard.type(`{"Authorization": "Bearer ${agent.token}"`);
    await expect(editorText(page, 'headers')).resolves.toBe(`{"Authorization": "Bearer ${agent.token}"}`);
    await page.locator('.graphiql-query-editor .monaco-editor').click();
    await page.keyboard.press('ControlOrMeta+Enter');
    await page.locator('.graphiql-response').filter({ hasText: agent.id }).waitFor({ timeout: 15_000 });
    expect(problems).toEqual([]);
    await page.close();
  }, 90_000);
});
