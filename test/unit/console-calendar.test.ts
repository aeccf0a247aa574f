import { describe, expect, it } from '@jest/globals';
import { describeRule, ruleFor } from '../../src/web/console/series-rule.js';
import { atMinutes, fromLocalInput, icalLocal, minutesInto, startOfWeek, toLocalInput, weekFromKey } from '../../src/web/console/time.js';
import { applyEvent, needsReload, withEvents, type LiveEvent, type WeekSlot } from '../../src/web/console/week-events.js';

// Local dates throughout: the console works in the browser's zone, whichever this process runs in.
const monday = new Date(2031, 2, 3);

const booking = (id: string, startsAt: Date, endsAt: Date, rrule: string | null = null) => ({
  id,
  agentId: 'agent',
  startsAt: startsAt.toISOString(),
  endsAt: endsAt.toISOString(),
  status: 'confirmed',
  rrule,
  version: 1,
});
const event = (type: string, of: ReturnType<typeof booking>, cursor = '1', previous: LiveEvent['previous'] = null): LiveEvent => ({
  cursor,
  type,
  createdAt: new Date().toISOString(),
  booking: of,
  previous,
});
const slotOf = (of: ReturnType<typeof booking>): WeekSlot => {
  const { agentId: _agentId, ...fields } = of;
  return { startsAt: of.startsAt, endsAt: of.endsAt, booking: fields };
};

describe('the console week', () => {
  it('starts on Monday at local midnight, from any day of it or from its URL key', () => {
    expect(startOfWeek(new Date(2031, 2, 9, 23, 59))).toEqual(monday);
    expect(startOfWeek(new Date(2031, 2, 3, 0, 0))).toEqual(monday);
    expect(weekFromKey('2031-03-05')).toEqual(monday);
    expect(weekFromKey('not a date', new Date(2031, 2, 4))).toEqual(monday);
  });

  it('places instants on a day’s clock face, clamped to the day', () => {
    expect(minutesInto(monday, new Date(2031, 2, 3, 9, 30))).toBe(570);
    expect(minutesInto(monday, new Date(2031, 2, 2, 23))).toBe(0);
    expect(minutesInto(monday, new Date(2031, 2, 4, 1))).toBe(1440);
    expect(atMinutes(monday, 570)).toEqual(new Date(2031, 2, 3, 9, 30));
    expect(atMinutes(monday, 1440)).toEqual(new Date(2031, 2, 4));
  });

  it('reads and writes datetime-local values, and refuses what names no instant', () => {
    expect(toLocalInput(new Date(2031, 2, 3, 9, 5))).toBe('2031-03-03T09:05');
    expect(fromLocalInput('2031-03-03T09:05')).toEqual(new Date(2031, 2, 3, 9, 5));
    expect(fromLocalInput('')).toBeNull();
    expect(fromLocalInput('2031-03-03')).toBeNull();
  });

  it('writes a series rule that keeps its wall-clock time in the browser’s zone', () => {
    const start = new Date(2031, 2, 3, 9, 0);
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    expect(icalLocal(start)).toBe('20310303T090000');
    expect(ruleFor('none', 10, start)).toBeNull();
    expect(ruleFor('weekdays', 10, start)).toBe(`DTSTART;TZID=${zone}:20310303T090000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;COUNT=10`);
  });

  it('says a rule in words when it can, and shows it as it is otherwise', () => {
    expect(describeRule('FREQ=DAILY;COUNT=14')).toBe('every day, 14 times');
    expect(describeRule('DTSTART;TZID=Europe/Berlin:20310303T090000\nRRULE:FREQ=WEEKLY;BYDAY=MO,FR;COUNT=20')).toBe('every week on Mon, Fri, 20 times');
    expect(describeRule('RRULE:FREQ=WEEKLY;UNTIL=20310401T000000Z')).toBe('every week, until 20310401');
    expect(describeRule('FREQ=WEEKLY;INTERVAL=2;COUNT=3')).toBe('FREQ=WEEKLY;INTERVAL=2;COUNT=3');
    expect(describeRule('FREQ=MONTHLY;BYMONTHDAY=1')).toBe('FREQ=MONTHLY;BYMONTHDAY=1');
  });
});

describe('live events on the week', () => {
  const existing = booking('a', new Date(2031, 2, 4, 9), new Date(2031, 2, 4, 10));
  const slots = [slotOf(existing)];

  it('adds a new single booking in the week once, in time order, and ignores one outside it', () => {
    const earlier = booking('b', new Date(2031, 2, 3, 8), new Date(2031, 2, 3, 9));
    const added = applyEvent(slots, event('booking.created', earlier), monday);
    expect(added.map((slot) => slot.booking.id)).toEqual(['b', 'a']);
    expect(added[0]!.booking).not.toHaveProperty('agentId');
    expect(applyEvent(added, event('booking.created', earlier, '2'), monday)).toBe(added);
    const nextWeek = booking('c', new Date(2031, 2, 10, 8), new Date(2031, 2, 10, 9));
    expect(applyEvent(slots, event('booking.created', nextWeek), monday)).toBe(slots);
  });

  it('brings a week answered before or after the events applied meanwhile up to the last of them', () => {
    // A reload asked for before a booking was made and answered after its event was applied in place
    // dropped the booking from the grid until the next reload.
    const made = booking('b', new Date(2031, 2, 5, 8), new Date(2031, 2, 5, 9));
    const gone = booking('a', new Date(2031, 2, 4, 9), new Date(2031, 2, 4, 10));
    const held = { calendars: [{ agentId: 'agent', bookingId: 'h' }] };
    const confirmedHold = booking('h', new Date(2031, 2, 6, 9), new Date(2031, 2, 6, 10));
    const meanwhile = [event('booking.created', made, '2'), event('booking.cancelled', gone, '3'), event('booking.created', confirmedHold, '4')];
    const staleAnswer = { slots, holds: [held] };
    const freshAnswer = { slots: [slotOf(made), slotOf(confirmedHold)], holds: [] };
    for (const answered of [staleAnswer, freshAnswer]) {
      const week = withEvents(answered, meanwhile, monday);
      expect(week.slots.map((slot) => slot.booking.id)).toEqual(['b', 'h']);
      expect(week.holds).toEqual([]);
    }
  });

  it('removes every slot of a cancelled booking', () => {
    const series = booking('s', new Date(2031, 2, 1, 9), new Date(2031, 2, 1, 10), 'FREQ=DAILY;COUNT=9');
    const week = [...slots, slotOf(series), { ...slotOf(series), startsAt: new Date(2031, 2, 5, 9).toISOString() }];
    expect(applyEvent(week, event('booking.cancelled', series), monday).map((slot) => slot.booking.id)).toEqual(['a']);
  });

  it('asks for a reload when the event does not spell out the slots: a new series, a transfer', () => {
    expect(needsReload(event('booking.created', booking('s', monday, new Date(2031, 2, 3, 1), 'FREQ=DAILY')))).toBe(true);
    expect(needsReload(event('booking.transferred', existing))).toBe(true);
    expect(needsReload(event('booking.created', existing))).toBe(false);
    expect(needsReload(event('booking.cancelled', existing))).toBe(false);
    expect(needsReload(event('booking.reminder', existing))).toBe(false);
  });

  it('moves a rescheduled single booking in place; an occurrence that left its series, or a series, reloads', () => {
    const moved = { ...existing, startsAt: new Date(2031, 2, 6, 14).toISOString(), endsAt: new Date(2031, 2, 6, 15).toISOString(), version: 2 };
    const rescheduled = event('booking.rescheduled', moved, '3', { bookingId: 'a', startsAt: existing.startsAt, endsAt: existing.endsAt });
    expect(needsReload(rescheduled)).toBe(false);
    expect(applyEvent(slots, rescheduled, monday)).toEqual([slotOf(moved)]);
    // Moved out of the week: gone from it.
    const away = { ...moved, startsAt: new Date(2031, 2, 12, 14).toISOString(), endsAt: new Date(2031, 2, 12, 15).toISOString() };
    expect(applyEvent(slots, event('booking.rescheduled', away, '4', { bookingId: 'a', startsAt: existing.startsAt, endsAt: existing.endsAt }), monday)).toEqual([]);
    const leftSeries = event('booking.rescheduled', booking('n', monday, new Date(2031, 2, 3, 1)), '5', { bookingId: 's', startsAt: existing.startsAt, endsAt: existing.endsAt });
    expect(needsReload(leftSeries)).toBe(true);
    const series = booking('s', monday, new Date(2031, 2, 3, 1), 'FREQ=DAILY');
    expect(needsReload(event('booking.rescheduled', series, '6', { bookingId: 's', startsAt: existing.startsAt, endsAt: existing.endsAt }))).toBe(true);
  });
});
