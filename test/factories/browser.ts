import bundledChromium from '@sparticuz/chromium';
import { chromium, type Browser } from 'playwright-core';

/**
 * Our own flags, not `@sparticuz/chromium`'s: those are made for AWS Lambda (one process, web security
 * off), which would close the browser with its first page and weaken what the page tests check. Nothing
 * in the background reaches out: this machine has no network beyond loopback.
 */
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync'];

/**
 * Headless Chromium with nothing installed on the machine: the build that ships inside the npm package
 * `@sparticuz/chromium` (unpacked to /tmp on first use), so `npm test` needs only Node. `CHROMIUM_PATH`
 * runs another Chromium instead (a distribution's, a newer one).
 */
export async function launchChromium(): Promise<Browser> {
  const executablePath = process.env.CHROMIUM_PATH ?? (await bundledChromium.executablePath());
  return chromium.launch({ executablePath, args: FLAGS, headless: true });
}
