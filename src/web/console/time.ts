/**
 * Calendar arithmetic in the browser's own time zone: a week starts on Monday at local midnight, days
 * are stepped with the calendar (so a daylight-saving day is 23 or 25 hours), and the forms read and
 * write `datetime-local` values. The API speaks UTC instants; everything shown is local.
 */

export const MINUTE_MS = 60_000;

export function startOfWeek(date: Date): Date {
  const start = new Date(date.getFullYear(), date.getMonth(), date.getDate());
  start.setDate(start.getDate() - ((start.getDay() + 6) % 7));
  return start;
}

export function addDays(date: Date, days: number): Date {
  const next = new Date(date);
  next.setDate(next.getDate() + days);
  return next;
}

export function addMinutes(date: Date, minutes: number): Date {
  return new Date(date.getTime() + minutes * MINUTE_MS);
}

/** `2030-03-04`: the week's key in the page URL (local date). */
export function dateKey(date: Date): string {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** The Monday of the week in `?week=2030-03-04`, or of this week. */
export function weekFromKey(key: string | null, now = new Date()): Date {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(key ?? '');
  return startOfWeek(match ? new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3])) : now);
}

/** Where `instant` falls on `day`'s clock face, in minutes (0 to 1440): wall-clock time, as calendars draw it. */
export function minutesInto(day: Date, instant: Date): number {
  if (instant <= day) return 0;
  if (instant >= addDays(day, 1)) return 1440;
  return instant.getHours() * 60 + instant.getMinutes();
}

/** The instant at `minutes` past local midnight of `day` (wall-clock, as the grid shows it). */
export function atMinutes(day: Date, minutes: number): Date {
  if (minutes >= 1440) return addDays(day, 1);
  return new Date(day.getFullYear(), day.getMonth(), day.getDate(), Math.floor(minutes / 60), minutes % 60);
}

/** `YYYY-MM-DDTHH:mm` for `<input type="datetime-local">`, in local time. */
export function toLocalInput(date: Date): string {
  return `${dateKey(date)}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** The instant a `datetime-local` value names (parsed as local time), or null when it names none. */
export function fromLocalInput(value: string): Date | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(value)) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
const dayFormat = new Intl.DateTimeFormat(undefined, { weekday: 'short', day: 'numeric' });
const dateFormat = new Intl.DateTimeFormat(undefined, { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric' });

export const formatTime = (date: Date) => timeFormat.format(date);
export const formatDay = (date: Date) => dayFormat.format(date);
export const formatDate = (date: Date) => dateFormat.format(date);

/** `Tue, 4 Mar 2030, 09:00–10:00` (the end's date too when it is another day). */
export function formatRange(startsAt: Date, endsAt: Date): string {
  const sameDay = dateKey(startsAt) === dateKey(addMinutes(endsAt, -1));
  return `${formatDate(startsAt)}, ${formatTime(startsAt)}–${sameDay ? '' : `${formatDate(endsAt)}, `}${formatTime(endsAt)}`;
}

/** The browser's IANA zone, for a series that keeps its wall-clock time across daylight-saving changes. */
export function localZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/** `20300304T090000`: a local date-time as RFC 5545 writes it after `DTSTART;TZID=…:`. */
export function icalLocal(date: Date): string {
  return `${dateKey(date).replaceAll('-', '')}T${pad(date.getHours())}${pad(date.getMinutes())}${pad(date.getSeconds())}`;
}

function pad(value: number): string {
  return String(value).padStart(2, '0');
}
