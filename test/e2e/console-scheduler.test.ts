/// <reference lib="dom" />
import { mkdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../factories/agents.js';
import { createBooking } from '../factories/bookings.js';
import { launchChromium } from '../factories/browser.js';
import { eventually } from '../factories/webhook-receiver.js';
import { CreateBookingDocument } from '../generated/graphql.js';
import { bearer, startTestApp, type TestApp } from '../harness.js';

const ARTIFACTS = 'test-artifacts';
/** A Monday far enough ahead that notice and advance never get in the way; Berlin is UTC+1 that week. */
const WEEK = '2031-03-03';
const at = (day: number, time: string) => `2031-03-${String(3 + day).padStart(2, '0')}T${time}:00.000Z`;
const HOUR_PX = 40;

/**
 * The scheduler on /console (issue 27): the working-hours editor, holds on the week, and rescheduling by drag
 * and by form, against the real server in headless Chromium (the browser in UTC, the rules in Berlin).
 */
describe('/console: working hours, holds and reschedule', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  let agent: AgentWithToken;
  /** POSTs to /graphql the page sent (its documents go by id, so they are counted, not named). */
  let graphqlPosts = 0;
  const pageErrors: string[] = [];

  const tab = (name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true }).click();
  /** A notice of the page (role status or alert) saying exactly `text`. */
  const notice = (text: string | RegExp) => page.locator('.notice').filter({ hasText: text }).first().waitFor();
  const rules = async () => (await t.rest({ method: 'GET', url: '/api/agents/me/availability-rules', headers: bearer(agent.token) })).json();
  const bookingRow = async (id: string) =>
    (await t.query<{ starts_at: Date; ends_at: Date; version: number; status: string }>('select starts_at, ends_at, version, status from bookings where id = $1', [id]))[0]!;
  const range = (row: { starts_at: Date; ends_at: Date }) => [row.starts_at.toISOString(), row.ends_at.toISOString()];

  /** The page-relative point of `time` (UTC) in a day column, `inset` px right of its left edge. */
  const pointOf = async (day: string, time: string) => {
    const box = (await page.locator(`.day[data-day="${day}"]`).boundingBox())!;
    const [hours, minutes] = time.split(':').map(Number);
    return { x: box.x + box.width / 2, y: box.y + ((hours! * 60 + minutes!) / 60) * HOUR_PX };
  };
  /** Grabs the booking 10 minutes below its start and drops it where that point lands at `to` on `day`. */
  const dragBooking = async (bookingId: string, day: string, to: string, { drop = true } = {}) => {
    const slot = page.locator(`.slot[data-booking="${bookingId}"]`).first();
    await slot.scrollIntoViewIfNeeded();
    const box = (await slot.boundingBox())!;
    const from = { x: box.x + box.width / 2, y: box.y + (10 / 60) * HOUR_PX };
    const target = await pointOf(day, to);
    await page.mouse.move(from.x, from.y);
    await page.mouse.down();
    await page.mouse.move(from.x + 3, from.y + 20, { steps: 2 });
    await page.mouse.move(target.x, target.y + (10 / 60) * HOUR_PX, { steps: 6 });
    if (drop) await page.mouse.up();
  };
  /** Drags on free time in a day column from one time to another (the new-booking selection). */
  const select = async (day: string, from: string, to: string) => {
    const [a, b] = [await pointOf(day, from), await pointOf(day, to)];
    await page.mouse.move(a.x, a.y + 3);
    await page.mouse.down();
    await page.mouse.move(b.x, (a.y + b.y) / 2, { steps: 3 });
    await page.mouse.move(b.x, b.y + 3, { steps: 3 });
    await page.mouse.up();
  };

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    t = await startTestApp({ jobs: false });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    base = `http://127.0.0.1:${address.port}`;
    const root = await bootstrapAgent(t, 'root');
    agent = await createAgent(t, root, 'Scheduler agent');
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: 'UTC', locale: 'en-GB' });
    page = await context.newPage();
    page.on('request', (request) => request.method() === 'POST' && new URL(request.url()).pathname === '/graphql' && graphqlPosts++);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`${base}/console?week=${WEEK}`);
    await page.getByLabel('Agent token').fill(agent.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('live-state').filter({ hasText: 'Live' }).waitFor();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('edits the working hours: the server’s errors sit under the fields they name, the saved rules are what the server reports, the week shades the rest', async () => {
    // No rules yet: nothing shaded.
    await page.locator(`.day[data-day="${WEEK}"]`).waitFor();
    expect(await page.locator('.off-hours').count()).toBe(0);
    await tab('Working hours');
    await page.getByTestId('rules-status').filter({ hasText: 'No rules' }).waitFor();
    await page.getByLabel('Time zone').fill('Europe/Berlin');
    // Monday: 09:00–12:00 and a second interval that overlaps it (the server refuses; it names `weeklyHours[1].start`).
    await page.getByLabel('Monday, interval 1, until', { exact: true }).fill('12:00');
    await page.getByRole('button', { name: 'Add hours on Monday' }).click();
    await page.getByLabel('Monday, interval 2, from', { exact: true }).fill('11:00');
    await page.getByLabel('Monday, interval 2, until', { exact: true }).fill('17:00');
    await page.getByRole('button', { name: '+ date' }).click();
    await page.getByLabel('Date 1', { exact: true }).fill('2031-03-05');
    await page.getByLabel('Buffer before', { exact: true }).fill('721');
    await page.getByLabel('Daily limit', { exact: true }).fill('4');
    await page.getByRole('button', { name: 'Save rules' }).click();
    await page.getByTestId('rules-error').filter({ hasText: 'Not saved' }).waitFor();
    await expect(page.locator('#wh-monday-1-start-error').innerText()).resolves.toBe('Must not overlap the previous interval of the day: list intervals in order, apart.');
    await expect(page.locator('#wh-buffer-before-error').innerText()).resolves.toBe('Must be a whole number from 0 to 720.');
    await expect(page.getByLabel('Buffer before', { exact: true }).getAttribute('aria-invalid')).resolves.toBe('true');
    expect((await t.rest({ method: 'GET', url: '/api/agents/me/availability-rules', headers: bearer(agent.token) })).statusCode).toBe(404);
    await page.screenshot({ path: `${ARTIFACTS}/console-working-hours-errors.png`, fullPage: true });

    await page.getByLabel('Monday, interval 2, from', { exact: true }).fill('13:00');
    await page.getByLabel('Buffer before', { exact: true }).fill('10');
    await page.getByLabel('Apply these rules to this agent’s own bookings too').check();
    await page.getByRole('button', { name: 'Save rules' }).click();
    await page.getByText('Saved. Others now see this calendar through these rules.').waitFor();
    expect(await page.locator('.rules-form .field-error').count()).toBe(0);
    const office = ['tuesday', 'wednesday', 'thursday', 'friday'].map((day) => ({ day, start: '09:00', end: '17:00' }));
    expect(await rules()).toMatchObject({
      timeZone: 'Europe/Berlin',
      weeklyHours: [{ day: 'monday', start: '09:00', end: '12:00' }, { day: 'monday', start: '13:00', end: '17:00' }, ...office],
      dateOverrides: [{ date: '2031-03-05', hours: [] }],
      bufferBeforeMinutes: 10,
      bufferAfterMinutes: 0,
      dailyLimit: 4,
      weeklyLimit: null,
      maximumAdvanceDays: null,
      enforceOnOwnBookings: true,
    });
    await page.screenshot({ path: `${ARTIFACTS}/console-working-hours.png`, fullPage: true });

    // Read back after a reload: the form shows what the server holds.
    await page.reload();
    await page.getByTestId('rules-status').filter({ hasText: 'Saved' }).waitFor();
    await expect(page.getByLabel('Time zone').inputValue()).resolves.toBe('Europe/Berlin');
    await expect(page.getByLabel('Monday, interval 2, from', { exact: true }).inputValue()).resolves.toBe('13:00');
    await expect(page.getByLabel('Buffer before', { exact: true }).inputValue()).resolves.toBe('10');

    // The week shades what is not working time, as the server computes it: Monday (UTC) 08:00–11:00 and 12:00–16:00
    // work, so three stretches are shaded; Wednesday is off all day; Saturday has no hours.
    await tab('Calendar');
    const shaded = (day: string) => page.locator(`.day[data-day="${day}"] .off-hours`);
    await eventually(async () => ((await shaded(WEEK).count()) === 3 ? true : undefined), 5_000);
    const tops = await shaded(WEEK).evaluateAll((blocks) => blocks.map((block) => [(block as HTMLElement).style.top, (block as HTMLElement).style.height]));
    expect(tops).toEqual([
      ['0px', `${8 * HOUR_PX}px`],
      [`${11 * HOUR_PX}px`, `${1 * HOUR_PX}px`],
      [`${16 * HOUR_PX}px`, `${8 * HOUR_PX}px`],
    ]);
    await expect(shaded('2031-03-05').evaluateAll((blocks) => blocks.map((block) => (block as HTMLElement).style.height))).resolves.toEqual([`${24 * HOUR_PX}px`]);
    await expect(shaded('2031-03-08').count()).resolves.toBe(1);
  }, 60_000);

  it('holds a selected slot, draws it counting down, confirms it into a booking with the held id, and releases another', async () => {
    // Thursday 09:00–10:00 UTC (10:00 in Berlin): working time.
    await select('2031-03-06', '09:00', '09:45');
    await eventually(async () => ((await page.getByLabel('Start', { exact: true }).inputValue()) === '2031-03-06T09:00' ? true : undefined), 5_000);
    await page.getByRole('button', { name: 'Hold 5 minutes' }).click();
    await notice(/^Held Thu, 6 Mar 2031, 09:00–10:00 until \d\d:\d\d/);
    const block = page.locator('.slot.hold');
    await block.waitFor();
    const [hold] = await t.query<{ id: string; booking_id: string }>(
      `select h.id, b.id as booking_id from holds h join bookings b on b.hold_id = h.id where h.holder_agent_id = $1`,
      [agent.id],
    );
    expect(await block.getAttribute('data-hold')).toBe(hold!.id);
    expect(await block.getAttribute('aria-label')).toMatch(/^Hold, Thu, 6 Mar 2031, 09:00–10:00, [45]:\d\d left$/);
    // It counts down.
    const before = await block.locator('.hold-left').innerText();
    await eventually(async () => ((await block.locator('.hold-left').innerText()) !== before ? true : undefined), 5_000);

    await block.click();
    const details = page.getByTestId('hold-details');
    await details.getByText(/Expires at \d\d:\d\d \([45]:\d\d left\)/).waitFor();
    await page.screenshot({ path: `${ARTIFACTS}/console-holds.png` });
    await details.getByRole('button', { name: 'Confirm booking' }).click();
    await notice('Confirmed the hold: booked Thu, 6 Mar 2031, 09:00–10:00.');
    await page.locator(`.slot[data-booking="${hold!.booking_id}"]`).waitFor();
    await expect(block.count()).resolves.toBe(0);
    expect(await bookingRow(hold!.booking_id)).toMatchObject({ status: 'confirmed' });

    // Another hold, released: its time is free again at once.
    await select('2031-03-07', '10:00', '10:15');
    await eventually(async () => ((await page.getByLabel('Start', { exact: true }).inputValue()) === '2031-03-07T10:00' ? true : undefined), 5_000);
    await page.getByRole('button', { name: 'Hold 5 minutes' }).click();
    await block.waitFor();
    await block.click();
    await page.getByTestId('hold-details').getByRole('button', { name: 'Release' }).click();
    await notice('Released the hold of Fri, 7 Mar 2031, 10:00–10:30: the time is free again.');
    await expect(block.count()).resolves.toBe(0);
    const released = await t.query<{ released: boolean }>('select released_at is not null as released from holds where holder_agent_id = $1 and starts_at = $2', [agent.id, at(4, '10:00')]);
    expect(released).toEqual([{ released: true }]);
  }, 60_000);

  let movedId: string;

  it('moves a booking by dragging it to another day and time (snapped to the quarter hour); a time the rules refuse says why and moves nothing', async () => {
    const booked = await createBooking(t, agent, at(1, '10:00'), at(1, '11:00'));
    movedId = booked.id;
    const slot = page.locator(`.slot[data-booking="${movedId}"]`);
    await slot.waitFor();

    // To Thursday 13:00 UTC, the pointer a few minutes off the quarter: it lands on 13:00.
    await dragBooking(movedId, '2031-03-06', '13:04', { drop: false });
    await page.locator('.slot.landing').filter({ hasText: '13:00' }).waitFor();
    await page.screenshot({ path: `${ARTIFACTS}/console-reschedule.png` });
    await page.mouse.up();
    await notice('Moved the booking to Thu, 6 Mar 2031, 13:00–14:00.');
    expect(range(await bookingRow(movedId))).toEqual([at(3, '13:00'), at(3, '14:00')]);
    expect((await bookingRow(movedId)).version).toBe(2);
    await page.locator(`.day[data-day="2031-03-06"] .slot[data-booking="${movedId}"]`).waitFor();

    // 21:00 in Berlin is outside the hours this agent enforces on itself.
    await dragBooking(movedId, '2031-03-06', '20:00');
    await notice('Not moved: That time is outside the agent’s working hours.');
    expect(range(await bookingRow(movedId))).toEqual([at(3, '13:00'), at(3, '14:00')]);
  }, 60_000);

  it('follows a move made elsewhere live, and the move form with the version it opened refuses as stale, reloads, then moves', async () => {
    await page.locator(`.slot[data-booking="${movedId}"]`).click();
    const details = page.getByTestId('slot-details');
    await details.getByRole('button', { name: 'Move…' }).click();
    await page.getByLabel('New start', { exact: true }).fill('2031-03-06T11:00');
    await page.getByLabel('New end', { exact: true }).fill('2031-03-06T12:00');

    // Meanwhile someone lengthens it through REST (If-Match: the version the page read).
    const postsBefore = graphqlPosts;
    const elsewhere = await t.rest({
      method: 'PATCH',
      url: `/api/bookings/${movedId}/reschedule`,
      headers: { ...bearer(agent.token), 'if-match': '"2"' },
      payload: { startsAt: at(3, '13:00'), endsAt: at(3, '14:30') },
    });
    expect(elsewhere.statusCode).toBe(200);
    // The booking.rescheduled event moves it in place, with no query.
    await page.locator(`.slot[data-booking="${movedId}"][aria-label$="13:00–14:30"]`).waitFor();
    await page.locator('[data-testid="live-event"]').filter({ hasText: 'rescheduled: Thu, 6 Mar 2031, 13:00–14:30 (was Thu, 6 Mar 2031, 13:00–14:00)' }).waitFor();
    expect(graphqlPosts).toBe(postsBefore);

    await details.getByRole('button', { name: 'Move booking' }).click();
    await page.getByTestId('move-error').filter({ hasText: 'This booking was changed elsewhere after the page showed it, so nothing was moved.' }).waitFor();
    expect(range(await bookingRow(movedId))).toEqual([at(3, '13:00'), at(3, '14:30')]);
    await eventually(async () => (graphqlPosts >= postsBefore + 2 ? true : undefined), 5_000);
    await page.screenshot({ path: `${ARTIFACTS}/console-reschedule-stale.png` });

    // Seen the change, the same form moves it.
    await details.getByRole('button', { name: 'Move booking' }).click();
    await notice('Moved the booking to Thu, 6 Mar 2031, 11:00–12:00.');
    expect(await bookingRow(movedId)).toMatchObject({ version: 4 });
    expect(range(await bookingRow(movedId))).toEqual([at(3, '11:00'), at(3, '12:00')]);
  }, 60_000);

  it('moves one occurrence of a series from a drag, after asking which occurrences move', async () => {
    const series = await t.gql(
      CreateBookingDocument,
      { input: { agentId: agent.id, startsAt: at(3, '15:00'), endsAt: at(3, '16:00'), rrule: 'FREQ=DAILY;COUNT=2' } },
      bearer(agent.token),
    );
    const seriesId = series.data!.createBooking.id;
    await page.locator(`.slot[data-booking="${seriesId}"]`).nth(1).waitFor();
    // Friday's occurrence, dragged to Friday 13:00: the form opens at the dropped time and asks for the scope.
    await page.mouse.move(0, 0);
    const friday = page.locator(`.day[data-day="2031-03-07"] .slot[data-booking="${seriesId}"]`);
    const box = (await friday.boundingBox())!;
    const target = await pointOf('2031-03-07', '13:00');
    await page.mouse.move(box.x + box.width / 2, box.y + 6);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width / 2, box.y + 26, { steps: 2 });
    await page.mouse.move(target.x, target.y + 6, { steps: 6 });
    await page.mouse.up();
    await expect(page.getByLabel('New start', { exact: true }).inputValue()).resolves.toBe('2031-03-07T13:00');
    await expect(page.getByLabel('New end', { exact: true }).inputValue()).resolves.toBe('2031-03-07T14:00');
    await page.getByLabel('Which occurrences', { exact: true }).selectOption('occurrence');
    await page.getByRole('button', { name: 'Move booking' }).click();
    await notice('Moved the occurrence to Fri, 7 Mar 2031, 13:00–14:00 (now a booking of its own).');
    const [left] = await t.query<{ exdates: string[] }>('select exdates from bookings where id = $1', [seriesId]);
    expect(left!.exdates).toEqual([at(4, '15:00')]);
    const own = await t.query<{ id: string }>('select id from bookings where agent_id = $1 and starts_at = $2 and status = $3', [agent.id, at(4, '13:00'), 'confirmed']);
    expect(own).toHaveLength(1);
    await page.locator(`.slot[data-booking="${own[0]!.id}"]`).waitFor();
    expect(pageErrors).toEqual([]);
  }, 60_000);
});
