/// <reference lib="dom" />
import { mkdir, readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, BrowserContext, Locator, Page, WebSocket } from 'playwright-core';
import { freePort } from '../../src/platform/db/embedded-postgres.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../factories/agents.js';
import { createBooking, postBooking } from '../factories/bookings.js';
import { launchChromium } from '../factories/browser.js';
import { startFreezableProxy, type FreezableProxy } from '../factories/freezable-proxy.js';
import { eventually, startWebhookReceiver, type WebhookReceiver } from '../factories/webhook-receiver.js';
import { CreateBookingDocument } from '../generated/graphql.js';
import { bearer, startTestApp, withoutCost, type TestApp } from '../harness.js';

const ARTIFACTS = 'test-artifacts';
/** A Monday far enough ahead that the calendar is the test's alone. */
const WEEK = '2031-03-03';
const at = (day: number, time: string) => `2031-03-${String(3 + day).padStart(2, '0')}T${time}:00.000Z`;

describe('/console in headless Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let proxy: FreezableProxy;
  let base: string;
  let receiver: WebhookReceiver;
  let root: AgentWithToken;
  let agent: AgentWithToken;
  let peer: AgentWithToken;
  let seriesId: string;
  const hostsContacted = new Set<string>();
  const urlsSeen: string[] = [];
  const policyViolations: string[] = [];
  const framesSent: string[] = [];
  const sockets: WebSocket[] = [];
  /** The names of the GraphQL operations the pages sent over HTTP, in order. */
  const operationsSent: string[] = [];

  /** The console sends trusted-document ids, not query text: the name comes from the manifest it was built with. */
  let trustedDocuments: Record<string, string> = {};
  const operationName = (body: string) => {
    const { documentId, query } = JSON.parse(body) as { documentId?: string; query?: string };
    const text = query ?? trustedDocuments[documentId ?? ''] ?? '';
    return /(?:query|mutation) (\w+)/.exec(text)?.[1] ?? `unknown operation ${body.slice(0, 80)}`;
  };

  const shot = (name: string, target: Page = page) => target.screenshot({ path: `${ARTIFACTS}/console-${name}.png`, fullPage: true });

  const watch = (target: Page) => {
    target.on('request', (request) => {
      hostsContacted.add(new URL(request.url()).host);
      urlsSeen.push(request.url());
      if (request.method() === 'POST' && new URL(request.url()).pathname === '/graphql') operationsSent.push(operationName(request.postData() ?? ''));
    });
    target.on('websocket', (socket) => {
      if (target === page) sockets.push(socket);
      urlsSeen.push(socket.url());
      socket.on('framesent', (frame) => framesSent.push(String(frame.payload)));
    });
    target.on('console', (message) => {
      if (/Content.Security.Policy|Refused to/i.test(message.text())) policyViolations.push(message.text());
    });
    target.on('pageerror', (error) => policyViolations.push(`page error: ${error.message}`));
  };

  const openConsole = async (target: Page, who: AgentWithToken, search = `?week=${WEEK}`) => {
    await target.goto(`${base}/console${search}`);
    await target.getByLabel('Agent token').fill(who.token);
    await target.getByRole('button', { name: 'Sign in' }).click();
    await target.getByTestId('live-state').filter({ hasText: 'Live' }).waitFor();
  };
  const liveState = (target: Page = page) => target.getByTestId('live-state').getAttribute('data-state');
  const slotsOf = (bookingId: string, target: Page = page) => target.locator(`.slot[data-booking="${bookingId}"]`);
  /** Waits (briefly) until the locator matches exactly `count` elements: renders follow answers asynchronously. */
  const settlesAt = (locator: Locator, count: number) => eventually(async () => ((await locator.count()) === count ? true : undefined), 5_000);
  const tab = (name: string, target: Page = page) => target.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true }).click();

  /** Drags on a day column of the grid from one time to another (UTC: the browser runs in UTC). */
  const drag = async (day: string, from: string, to: string) => {
    const column = page.locator(`.day[data-day="${day}"]`);
    const box = (await column.boundingBox())!;
    const y = (time: string) => {
      const [hours, minutes] = time.split(':').map(Number);
      return box.y + ((hours! * 60 + minutes!) / 60) * 40 + 3;
    };
    await page.mouse.move(box.x + box.width / 2, y(from));
    await page.mouse.down();
    await page.mouse.move(box.x + box.width / 2, (y(from) + y(to)) / 2, { steps: 3 });
    await page.mouse.move(box.x + box.width / 2, y(to), { steps: 3 });
    await page.mouse.up();
  };

  beforeAll(async () => {
    trustedDocuments = JSON.parse(await readFile(new URL('../../src/web/generated/console/persisted-documents.json', import.meta.url), 'utf8')) as Record<string, string>;
    await mkdir(ARTIFACTS, { recursive: true });
    const port = await freePort();
    t = await startTestApp({ env: { WEBHOOK_RETRY_BASE_MS: '50', WEBHOOK_MAX_ATTEMPTS: '2' } });
    await t.app.listen({ port, host: '127.0.0.1' });
    // The page reaches the server through a proxy that can drop every connection, as a network would.
    proxy = await startFreezableProxy(`http://127.0.0.1:${port}`);
    base = proxy.url.replace(/\/$/, '');
    receiver = await startWebhookReceiver();

    root = await bootstrapAgent(t, 'root');
    agent = await createAgent(t, root, 'Console agent');
    peer = await createAgent(t, root, 'Peer agent');
    // A daily series that began before the week shown: its occurrences fill Monday to Sunday at 09:00.
    const series = await t.gql(
      CreateBookingDocument,
      { input: { agentId: agent.id, startsAt: '2031-03-01T09:00:00Z', endsAt: '2031-03-01T10:00:00Z', rrule: 'FREQ=DAILY;COUNT=14' } },
      bearer(agent.token),
    );
    seriesId = series.data!.createBooking.id;
    await createBooking(t, agent, at(2, '13:00'), at(2, '14:30'));

    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: 'UTC', locale: 'en-GB' });
    page = await context.newPage();
    watch(page);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await receiver?.close();
    await t?.close();
  });

  it('signs in with a pasted token kept in sessionStorage, and refuses a wrong one in plain words', async () => {
    await page.goto(`${base}/console?week=${WEEK}`);
    await page.getByLabel('Agent token').fill('agt_not-a-real-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('That token was not accepted: check that you copied all of it.').waitFor();

    await page.getByLabel('Agent token').fill(agent.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('agent-name').filter({ hasText: 'Console agent' }).waitFor();
    await page.getByTestId('live-state').filter({ hasText: 'Live' }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('console_agent_token'))).toBe(agent.token);
    expect(await page.evaluate(() => JSON.stringify(localStorage))).not.toContain(agent.token);
    expect(page.url()).not.toContain('agt_');
  });

  it('shows the occurrences of a series that began before the week, and single bookings', async () => {
    await settlesAt(slotsOf(seriesId), 7);
    expect(await slotsOf(seriesId).first().getAttribute('aria-label')).toMatch(/^Recurring booking, Mon, 3 Mar 2031, 09:00–10:00$/);
    await page.locator(`.slot[data-starts="${at(2, '13:00')}"]`).waitFor();
    // A reload keeps the session (same tab) and the week (URL).
    await page.reload();
    await page.getByTestId('live-state').filter({ hasText: 'Live' }).waitFor();
    await settlesAt(slotsOf(seriesId), 7);
    await shot('week');
  });

  it('creates a booking by dragging a range, after previewing its conflicts', async () => {
    // 08:30–09:30 on Tuesday overlaps the series' 09:00 occurrence: the preview says so before saving.
    await drag('2031-03-04', '08:30', '09:15');
    await eventually(async () => ((await page.getByLabel('Start').inputValue()) === '2031-03-04T08:30' ? true : undefined), 5_000);
    expect(await page.getByLabel('End').inputValue()).toBe('2031-03-04T09:30');
    await page.getByTestId('booking-preview').filter({ hasText: 'Overlaps 1 booking (a recurring one).' }).waitFor();
    await page.getByTestId('booking-preview').getByText('Tue, 4 Mar 2031, 08:30–09:30').waitFor();
    // Only the occurrence that clashes is marked, not the whole series.
    await settlesAt(page.locator('.slot.conflict'), 1);
    expect(await page.locator('.slot.conflict').getAttribute('data-starts')).toBe(at(1, '09:00'));
    await shot('preview-conflict');
    await page.getByRole('button', { name: 'Create booking' }).click();
    await page.getByText('That time overlaps another booking on the calendar.').waitFor();

    // A free range: the preview clears it, the create writes it, the grid shows it.
    await drag('2031-03-04', '11:00', '11:45');
    await page.getByTestId('booking-preview').filter({ hasText: 'Free: nothing overlaps.' }).waitFor();
    expect(await page.locator('.slot.conflict').count()).toBe(0);
    await page.getByRole('button', { name: 'Create booking' }).click();
    await page.getByText(/^Booked Tue, 4 Mar 2031, 11:00–12:00\.$/).waitFor();
    await page.locator(`.slot[data-starts="${at(1, '11:00')}"]`).waitFor();
    const rows = await t.query<{ ends_at: Date }>('select ends_at from bookings where agent_id = $1 and starts_at = $2', [agent.id, at(1, '11:00')]);
    expect(rows.map((row) => row.ends_at.toISOString())).toEqual([at(1, '12:00')]);
  });

  it('creates a series from the keyboard form', async () => {
    await page.getByLabel('Start').fill('2031-03-05T16:00');
    await page.getByLabel('End').fill('2031-03-05T16:30');
    await page.getByLabel('Repeat').selectOption('weekly');
    await page.getByLabel('Occurrences').fill('3');
    await page.getByTestId('booking-preview').filter({ hasText: 'Free: nothing overlaps (3 occurrences).' }).waitFor();
    await page.getByLabel('Occurrences').press('Enter');
    await page.getByText(/^Booked Wed, 5 Mar 2031, 16:00–16:30, repeating\.$/).waitFor();
    const [row] = await t.query<{ rrule: string }>('select rrule from bookings where agent_id = $1 and starts_at = $2', [agent.id, at(2, '16:00')]);
    expect(row!.rrule).toBe('DTSTART;TZID=UTC:20310305T160000\nRRULE:FREQ=WEEKLY;COUNT=3');
    await page.locator(`.slot.series[data-starts="${at(2, '16:00')}"]`).waitFor();
  });

  it('cancels one occurrence of the series, then a single booking', async () => {
    await page.locator(`.slot[data-booking="${seriesId}"][data-starts="${at(3, '09:00')}"]`).click();
    const details = page.getByTestId('slot-details');
    await details.getByText('Repeats every day, 14 times').waitFor();
    await details.getByRole('button', { name: 'Cancel this occurrence' }).click();
    await page.getByText('Cancelled the occurrence of Thu, 6 Mar 2031, 09:00–10:00.').waitFor();
    await settlesAt(slotsOf(seriesId), 6);
    const [series] = await t.query<{ exdates: string[] }>('select exdates from bookings where id = $1', [seriesId]);
    expect(series!.exdates).toEqual([at(3, '09:00')]);

    await page.locator(`.slot[data-starts="${at(2, '13:00')}"]`).click();
    await details.getByRole('button', { name: 'Cancel booking' }).click();
    await details.getByRole('button', { name: 'Yes, cancel' }).click();
    await page.getByText('Cancelled Wed, 5 Mar 2031, 13:00–14:30.').waitFor();
    await settlesAt(page.locator(`.slot[data-starts="${at(2, '13:00')}"]`), 0);
  });

  it('shows a booking written through REST, in this process and in another, without a reload', async () => {
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
    const rest = await createBooking(t, agent, at(4, '14:00'), at(4, '15:00'));
    await slotsOf(rest.id).waitFor();
    await page.locator(`[data-testid="live-event"][data-booking="${rest.id}"]`).waitFor();

    // Another server process on the same database: the event reaches this one through NOTIFY.
    const other = await startTestApp({ databaseUrl: t.databaseUrl, jobs: false });
    try {
      const remote = await postBooking(other, agent, { startsAt: at(4, '16:00'), endsAt: at(4, '17:00') });
      expect(remote.statusCode).toBe(201);
      await slotsOf(remote.json<{ id: string }>().id).waitFor();
      // Cancelled elsewhere: it leaves the grid too.
      await other.rest({ method: 'DELETE', url: `/api/bookings/${rest.id}`, headers: bearer(agent.token) });
      await slotsOf(rest.id).waitFor({ state: 'detached' });
    } finally {
      await other.app.close();
      await other.orm.close(true);
    }
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    // A second gateway of its own (a database, migrations, definitions) starts within it: more than the default on two busy cores.
  }, 60_000);

  it('keeps a booking applied live while a reload of the week was in flight with an answer from before it', async () => {
    const weekSlotsId = Object.entries(trustedDocuments).find(([, text]) => text.includes('query WeekSlots('))![0];
    let answerFetched!: () => void;
    const fetched = new Promise<void>((resolve) => (answerFetched = resolve));
    let deliver!: () => void;
    const delivered = new Promise<void>((resolve) => (deliver = resolve));
    // The next week load is answered by the server at once, and reaches the page only when the test says.
    let held = false;
    await page.route('**/graphql', async (route) => {
      if (held || !route.request().postData()?.includes(weekSlotsId)) return route.continue();
      held = true;
      const answer = await route.fetch();
      answerFetched();
      await delivered;
      await route.fulfill({ response: answer });
    });
    try {
      // A new series is an event the grid cannot apply by itself: the week reloads.
      const series = await t.gql(CreateBookingDocument, { input: { agentId: agent.id, startsAt: at(5, '06:00'), endsAt: at(5, '07:00'), rrule: 'FREQ=DAILY;COUNT=2' } }, bearer(agent.token));
      expect(series.errors).toBeUndefined();
      await fetched;
      // Made after the server answered that reload: applied in place from its event.
      const single = await createBooking(t, agent, at(6, '12:00'), at(6, '13:00'));
      await slotsOf(single.id).waitFor();
      deliver();
      await slotsOf(series.data!.createBooking.id).first().waitFor();
      // The reload's answer does not have it; the page keeps what it saw after the reload was asked for.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await slotsOf(single.id).count()).toBe(1);
    } finally {
      deliver();
      await page.unroute('**/graphql');
    }
  }, 30_000);

  it('resumes from its cursor after a dropped connection: what happened meanwhile appears once', async () => {
    const lastCursor = await page.getByTestId('live-event').first().getAttribute('data-cursor');
    expect(lastCursor).toMatch(/^\d+$/);
    const operationsBefore = operationsSent.length;
    const framesBefore = framesSent.length;

    await proxy.refuse();
    await eventually(async () => ((await liveState()) === 'reconnecting' ? true : undefined), 10_000);
    await page.getByTestId('live-state').filter({ hasText: 'Reconnecting…' }).waitFor();
    await shot('reconnecting');
    // Written while the page is cut off.
    const missed = await createBooking(t, agent, at(5, '10:00'), at(5, '11:00'));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await slotsOf(missed.id).count()).toBe(0);

    await proxy.accept();
    await page.getByTestId('live-state').filter({ hasText: 'Live' }).waitFor({ timeout: 20_000 });
    await slotsOf(missed.id).waitFor();
    // Replayed from the cursor, not reloaded: the subscription asked for what came after the last event seen,
    // and no query ran (a single booking's event carries everything the grid needs).
    const resubscribed = framesSent.slice(framesBefore).filter((frame) => frame.includes('"type":"subscribe"'));
    expect(resubscribed.length).toBeGreaterThanOrEqual(1);
    expect(resubscribed.every((frame) => JSON.parse(frame).payload.variables.after === lastCursor)).toBe(true);
    expect(operationsSent.slice(operationsBefore)).toEqual([]);
    // Once on the grid, once in the activity list.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await expect(slotsOf(missed.id).count()).resolves.toBe(1);
    await expect(page.locator(`[data-testid="live-event"][data-booking="${missed.id}"]`).count()).resolves.toBe(1);

    // The browser going offline is said as such, and coming back resumes.
    await context.setOffline(true);
    await page.getByTestId('live-state').filter({ hasText: 'Offline' }).waitFor();
    await context.setOffline(false);
    await page.getByTestId('live-state').filter({ hasText: 'Live' }).waitFor({ timeout: 20_000 });
  }, 60_000);

  it('runs proposals between two agents: propose, reject (stays pending), accept, decline and withdraw', async () => {
    await createBooking(t, peer, at(4, '10:30'), at(4, '11:30'));
    await tab('Proposals');
    const propose = async (start: string, end: string) => {
      await page.getByLabel('Agent id').fill(peer.id);
      await page.getByLabel('Start').fill(start);
      await page.getByLabel('End').fill(end);
      await page.getByRole('button', { name: 'Propose' }).click();
      await eventually(async () => ((await page.getByLabel('Agent id').inputValue()) === '' ? true : undefined));
    };
    // The peer's 10:30 slot, which moves on accept (the proposer's series holds 09:00–10:00), and two more to refuse.
    await propose('2031-03-07T10:30', '2031-03-07T11:30');
    await propose('2031-03-07T18:00', '2031-03-07T19:00');
    await propose('2031-03-07T20:00', '2031-03-07T21:00');
    const outgoing = page.getByRole('region', { name: 'Proposals by this agent' }).getByTestId('proposal');
    await outgoing.nth(2).waitFor();
    await page.getByText('Proposal sent.').waitFor();

    const peerPage = await context.browser()!.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: 'UTC', locale: 'en-GB' }).then((other) => other.newPage());
    watch(peerPage);
    await openConsole(peerPage, peer, '?view=proposals');
    const incoming = peerPage.getByRole('region', { name: 'Proposals to this agent' });
    await incoming.getByTestId('proposal').nth(2).waitFor();
    await shot('proposals-incoming', peerPage);

    await incoming.getByRole('button', { name: 'Reject the proposal for Fri, 7 Mar 2031, 10:30–11:30' }).click();
    await peerPage.getByText('Rejected: you keep the slot and the proposal stays open.').waitFor();
    await incoming.getByRole('button', { name: 'Accept the proposal for Fri, 7 Mar 2031, 10:30–11:30' }).click();
    await peerPage.getByText('Accepted: the slot moved to the proposer.').waitFor();
    await incoming.getByRole('button', { name: 'Decline the proposal for Fri, 7 Mar 2031, 18:00–19:00' }).click();
    await peerPage.getByText('Declined for good.').waitFor();
    await peerPage.context().close();

    // The proposer's page follows the accept by itself (its booking.created event reloads the lists);
    // a decline moves no booking, so no event: the list shows it once refreshed.
    await outgoing.filter({ hasText: '10:30–11:30' }).getByText('accepted').waitFor();
    await page.getByRole('button', { name: 'Refresh outgoing proposals' }).click();
    await outgoing.filter({ hasText: '18:00–19:00' }).getByText('declined').waitFor();
    await page.getByRole('button', { name: 'Withdraw the proposal for Fri, 7 Mar 2031, 20:00–21:00' }).click();
    await outgoing.filter({ hasText: '20:00–21:00' }).getByText('withdrawn').waitFor();

    await tab('Calendar');
    await page.locator(`.slot[data-starts="${at(4, '10:30')}"]`).waitFor();
    const [moved] = await t.query<{ agent_id: string }>('select agent_id from bookings where starts_at = $1 and status = $2', [at(4, '10:30'), 'confirmed']);
    expect(moved!.agent_id).toBe(agent.id);

    // docs/console.md's picture (docs/console.png): a week with a series, single bookings, a previewed clash and live activity.
    await drag('2031-03-05', '08:15', '09:15');
    await page.getByTestId('booking-preview').filter({ hasText: 'Overlaps 1 booking' }).waitFor();
    await page.screenshot({ path: `${ARTIFACTS}/console-desktop.png` });
    await page.getByRole('button', { name: 'Clear' }).click();
  }, 60_000);

  it('finds free time with another agent, proposes the first available slot, and sets who may see its free/busy', async () => {
    // Monday 10 March: the console agent's series holds 09:00–10:00, the peer is busy 08:00–08:30.
    await createBooking(t, peer, '2031-03-10T08:00:00Z', '2031-03-10T08:30:00Z');
    await tab('Availability');
    await page.getByLabel('Agent ids').fill(peer.id);
    await page.getByLabel('From').fill('2031-03-10T08:00');
    await page.getByLabel('To').fill('2031-03-10T12:00');
    await page.getByLabel('Duration (minutes)').fill('60');
    await page.getByLabel('Start every').selectOption('30');
    // Siblings are not family: the peer does not share its free/busy until it says so.
    await page.getByRole('button', { name: 'Find free slots' }).click();
    await page.getByText('An agent asked about does not share its free/busy with this one, or does not exist.').waitFor();
    const allow = await t.rest({ method: 'POST', url: '/graphql', headers: bearer(peer.token), payload: { query: 'mutation { setFreeBusyVisibility(visibility: anyone) { id } }' } });
    expect(allow.json<{ data?: unknown }>().data).toEqual({ setFreeBusyVisibility: { id: peer.id } });

    await page.getByRole('button', { name: 'Find free slots' }).click();
    await settlesAt(page.getByTestId('free-slot'), 3);
    expect(await page.getByTestId('free-slot').allInnerTexts()).toEqual([
      expect.stringContaining('Mon, 10 Mar 2031, 10:00–11:00'),
      expect.stringContaining('Mon, 10 Mar 2031, 10:30–11:30'),
      expect.stringContaining('Mon, 10 Mar 2031, 11:00–12:00'),
    ]);
    await shot('availability');
    await page.getByRole('button', { name: 'Propose the first available' }).click();
    await page.getByText('Proposed the first common slot: Mon, 10 Mar 2031, 10:00–11:00.').waitFor();
    const proposals = await t.query<{ status: string }>('select status from proposals where proposer_agent_id = $1 and target_agent_id = $2 and starts_at = $3', [
      agent.id,
      peer.id,
      '2031-03-10T10:00:00Z',
    ]);
    expect(proposals).toEqual([{ status: 'pending' }]);

    // This agent's own setting: family by default, now nobody; the page remembers it after a reload.
    await expect(page.getByRole('radio', { name: /^Family/ }).isChecked()).resolves.toBe(true);
    await page.getByRole('radio', { name: 'Nobody but this agent' }).check();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    const [row] = await t.query<{ free_busy_visibility: string }>('select free_busy_visibility from agents where id = $1', [agent.id]);
    expect(row!.free_busy_visibility).toBe('nobody');
    await page.reload();
    await page.getByRole('radio', { name: 'Nobody but this agent' }).waitFor();
    await expect(page.getByRole('radio', { name: 'Nobody but this agent' }).isChecked()).resolves.toBe(true);
  }, 60_000);

  it('registers a webhook (its secret shown once), shows its deliveries, redelivers, disables and enables it', async () => {
    await tab('Webhooks');
    await page.getByLabel('URL').fill(receiver.url);
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const secret = await page.getByLabel('Signing secret (Standard Webhooks)').inputValue();
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'I have saved the secret' }).click();
    expect(await page.content()).not.toContain(secret);

    const booked = await createBooking(t, agent, at(6, '08:00'), at(6, '09:00'));
    await receiver.waitFor(1);
    const row = page.getByTestId('webhook').filter({ hasText: receiver.url });
    await row.getByRole('button', { name: 'Deliveries' }).click();
    const deliveries = row.getByTestId('delivery');
    await deliveries.filter({ hasText: 'delivered' }).first().waitFor();
    const cursor = (await deliveries.first().innerText()).match(/#(\d+)/)![1]!;
    await row.getByRole('button', { name: `Redeliver event ${cursor}` }).click();
    await page.getByText(`Event ${cursor} queued again as a new delivery.`).waitFor();
    await receiver.waitFor(2);
    expect(receiver.received.map((hook) => hook.json.data.booking.id)).toEqual([booked.id, booked.id]);
    await row.getByRole('button', { name: 'Refresh deliveries' }).click();
    await eventually(async () => ((await deliveries.filter({ hasText: 'delivered' }).count()) === 2 ? true : undefined));
    await shot('webhooks');

    await row.getByRole('button', { name: 'Disable' }).click();
    await row.getByText('disabled by its agent').waitFor();
    await createBooking(t, agent, at(6, '10:00'), at(6, '11:00'));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(receiver.hits).toBe(2);
    await row.getByRole('button', { name: 'Enable' }).click();
    await row.getByText('enabled', { exact: true }).waitFor();
  }, 60_000);

  it('creates a child agent and shows its token once', async () => {
    await tab('Agents');
    await page.getByLabel('Name').fill('Console child');
    await page.getByRole('button', { name: 'Create agent' }).click();
    const token = await page.getByLabel('Token of Console child').inputValue();
    expect(token).toMatch(/^agt_/);
    await page.getByTestId('child').filter({ hasText: 'Console child' }).waitFor();
    // The token works, and it was kept nowhere.
    const me = await t.rest({ method: 'POST', url: '/graphql', headers: bearer(token), payload: { query: '{ me { name parent { id } } }' } });
    expect(withoutCost(me.json())).toEqual({ data: { me: { name: 'Console child', parent: { id: agent.id } } } });
    expect(await page.evaluate(() => JSON.stringify({ ...sessionStorage, ...localStorage }))).not.toContain(token);
    await page.getByRole('button', { name: 'I have saved the token' }).click();
    expect(await page.content()).not.toContain(token);
    await tab('Calendar');
    await tab('Agents');
    await page.getByTestId('child').filter({ hasText: 'Console child' }).waitFor();
    expect(await page.content()).not.toContain(token);
  });

  it('creates a calendar feed URL and revokes it', async () => {
    await tab('Calendar feeds');
    await page.getByRole('button', { name: 'New feed URL' }).click();
    const url = await page.getByLabel('Feed URL').inputValue();
    expect(url).toMatch(new RegExp(`^${base}/api/agents/${agent.id}/calendar\\.ics\\?token=cal_`));
    const feed = await t.rest({ method: 'GET', url: url.slice(base.length) });
    expect(feed.statusCode).toBe(200);
    await page.getByTestId('feed').first().getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('Feed revoked: its URL stopped working.').waitFor();
    expect((await t.rest({ method: 'GET', url: url.slice(base.length) })).statusCode).toBe(401);
  });

  it('fits a 360 px wide screen on every tab', async () => {
    const phone = await browser.newContext({ viewport: { width: 360, height: 740 }, timezoneId: 'UTC', locale: 'en-GB' }).then((other) => other.newPage());
    watch(phone);
    await openConsole(phone, agent);
    await slotsOf(seriesId, phone).first().waitFor();
    const overflow = () => phone.evaluate(() => document.documentElement.scrollWidth);
    expect(await overflow()).toBeLessThanOrEqual(360);
    await phone.screenshot({ path: `${ARTIFACTS}/console-360px.png` });
    for (const name of ['Working hours', 'Proposals', 'Availability', 'Webhooks', 'Agents', 'Calendar feeds']) {
      await tab(name, phone);
      await phone.getByRole('heading', { level: 2 }).first().waitFor();
      if (name === 'Webhooks') {
        await phone.getByRole('button', { name: 'Deliveries' }).first().click();
        await phone.getByTestId('delivery').first().waitFor();
      }
      await phone.waitForLoadState('networkidle');
      expect([name, await overflow()]).toEqual([name, expect.any(Number)]);
      expect(await overflow()).toBeLessThanOrEqual(360);
    }
    await phone.screenshot({ path: `${ARTIFACTS}/console-360px-webhooks.png`, fullPage: true });
    await phone.context().close();
  }, 60_000);

  it('signs out: the token leaves the tab and the live connection closes', async () => {
    await tab('Calendar');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out; the token was removed from this tab.').waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('console_agent_token'))).toBeNull();
    await page.getByLabel('Agent token').waitFor();
    // The socket of this document (Playwright reports no close for one a reload tore down).
    const current = sockets.at(-1)!;
    await eventually(async () => (current.isClosed() ? true : undefined), 5_000);
  });

  it('kept the token out of every URL, broke no rule of the page’s CSP and contacted only the server', () => {
    expect(urlsSeen.length).toBeGreaterThan(10);
    expect(urlsSeen.filter((url) => url.includes(agent.token) || url.includes(peer.token))).toEqual([]);
    expect(policyViolations).toEqual([]);
    expect([...hostsContacted]).toEqual([new URL(base).host]);
  });
});
