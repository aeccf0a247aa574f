/**
 * The working-hours editor's model: the rules as the form holds them (strings, as inputs give them), the
 * `AvailabilityRulesInput` they make, and where on the form each field the server names sits. The server
 * decides what is valid (ranges, order, overlap, the zone); the form only checks what its inputs cannot
 * express (a number that is not whole, an hour left empty).
 */
import type { AvailabilityRulesInput, ConsoleRulesFragment, Weekday } from '../generated/console/graphql.js';

export const WEEKDAYS: readonly { day: Weekday; label: string }[] = [
  { day: 'monday', label: 'Monday' },
  { day: 'tuesday', label: 'Tuesday' },
  { day: 'wednesday', label: 'Wednesday' },
  { day: 'thursday', label: 'Thursday' },
  { day: 'friday', label: 'Friday' },
  { day: 'saturday', label: 'Saturday' },
  { day: 'sunday', label: 'Sunday' },
];

/** `HH:MM` from `<input type="time">`; an end of `00:00` is midnight at the end of the day (the API's `24:00`). */
export interface Interval {
  start: string;
  end: string;
}

export interface Override {
  date: string;
  /** None: the day is off. */
  hours: Interval[];
}

export interface Draft {
  timeZone: string;
  /** Null: no weekly hours (every day open unless a date says otherwise). */
  weekly: Record<Weekday, Interval[]> | null;
  overrides: Override[];
  bufferBefore: string;
  bufferAfter: string;
  notice: string;
  /** Empty: no bound. */
  advance: string;
  dailyLimit: string;
  weeklyLimit: string;
  enforce: boolean;
}

/** Office hours, for an agent that has no weekly hours yet. */
export const OFFICE_HOURS: readonly Interval[] = [{ start: '09:00', end: '17:00' }];

const fromApiEnd = (end: string) => (end === '24:00' ? '00:00' : end);
const toApiEnd = (end: string) => (end === '00:00' ? '24:00' : end);
const interval = ({ start, end }: Interval): Interval => ({ start, end: fromApiEnd(end) });

export function emptyWeek(): Record<Weekday, Interval[]> {
  return Object.fromEntries(WEEKDAYS.map(({ day }) => [day, []])) as unknown as Record<Weekday, Interval[]>;
}

/** The form's values for the rules the server holds (none: office hours on weekdays in the browser's zone, unsaved). */
export function draftOf(rules: ConsoleRulesFragment | null, zone: string): Draft {
  if (!rules) {
    const weekly = emptyWeek();
    for (const { day } of WEEKDAYS.slice(0, 5)) weekly[day] = [...OFFICE_HOURS];
    return { timeZone: zone, weekly, overrides: [], bufferBefore: '0', bufferAfter: '0', notice: '0', advance: '', dailyLimit: '', weeklyLimit: '', enforce: false };
  }
  let weekly: Draft['weekly'] = null;
  if (rules.weeklyHours) {
    weekly = emptyWeek();
    for (const hours of rules.weeklyHours) weekly[hours.day].push(interval(hours));
  }
  return {
    timeZone: rules.timeZone,
    weekly,
    overrides: rules.dateOverrides.map((override) => ({ date: override.date, hours: override.hours.map(interval) })),
    bufferBefore: String(rules.bufferBeforeMinutes),
    bufferAfter: String(rules.bufferAfterMinutes),
    notice: String(rules.minimumNoticeMinutes),
    advance: rules.maximumAdvanceDays === null ? '' : String(rules.maximumAdvanceDays),
    dailyLimit: rules.dailyLimit === null ? '' : String(rules.dailyLimit),
    weeklyLimit: rules.weeklyLimit === null ? '' : String(rules.weeklyLimit),
    enforce: rules.enforceOnOwnBookings,
  };
}

/** The form's element id for each number field, by the API's name. */
export const NUMBER_FIELDS = {
  bufferBeforeMinutes: 'wh-buffer-before',
  bufferAfterMinutes: 'wh-buffer-after',
  minimumNoticeMinutes: 'wh-notice',
  maximumAdvanceDays: 'wh-advance',
  dailyLimit: 'wh-daily',
  weeklyLimit: 'wh-weekly-limit',
} as const;

export const weeklyId = (day: Weekday, n: number, end: 'start' | 'end') => `wh-${day}-${n}-${end}`;
export const overrideId = (index: number, part: 'date' | `${number}-start` | `${number}-end`) => `wh-ov-${index}-${part}`;

/** Form element id → message. */
export type FormErrors = Record<string, string>;

/**
 * The input the draft makes, with `fieldOf`: where on the form a field path the server names (`weeklyHours[3].end`,
 * `dateOverrides[0].hours[1].start`, `dailyLimit`) sits. `problems`: what the form refuses before asking.
 */
export function inputOf(draft: Draft): { input: AvailabilityRulesInput; fieldOf: (path: string) => string | null; problems: FormErrors } {
  const problems: FormErrors = {};
  // The n-th interval the input lists is this day's k-th: the server's `weeklyHours[n]` is that row.
  const rows: [Weekday, number][] = [];
  const weeklyHours = draft.weekly
    ? WEEKDAYS.flatMap(({ day }) =>
        draft.weekly![day].map((hours, k) => {
          rows.push([day, k]);
          if (!hours.start) problems[weeklyId(day, k, 'start')] = 'Give a start time.';
          if (!hours.end) problems[weeklyId(day, k, 'end')] = 'Give an end time.';
          return { day, start: hours.start, end: toApiEnd(hours.end) };
        }),
      )
    : null;
  const dateOverrides = draft.overrides.map((override, index) => {
    if (!override.date) problems[overrideId(index, 'date')] = 'Give a date.';
    return {
      date: override.date,
      hours: override.hours.map((hours, k) => {
        if (!hours.start) problems[overrideId(index, `${k}-start`)] = 'Give a start time.';
        if (!hours.end) problems[overrideId(index, `${k}-end`)] = 'Give an end time.';
        return { start: hours.start, end: toApiEnd(hours.end) };
      }),
    };
  });
  const whole = (value: string, id: string, optional: boolean): number | null => {
    const text = value.trim();
    if (!text && optional) return null;
    if (!/^-?\d+$/.test(text)) {
      problems[id] = optional ? 'Must be a whole number, or empty for none.' : 'Must be a whole number.';
      return null;
    }
    return Number(text);
  };
  const input: AvailabilityRulesInput = {
    timeZone: draft.timeZone.trim(),
    weeklyHours,
    dateOverrides,
    bufferBeforeMinutes: whole(draft.bufferBefore, NUMBER_FIELDS.bufferBeforeMinutes, false),
    bufferAfterMinutes: whole(draft.bufferAfter, NUMBER_FIELDS.bufferAfterMinutes, false),
    minimumNoticeMinutes: whole(draft.notice, NUMBER_FIELDS.minimumNoticeMinutes, false),
    maximumAdvanceDays: whole(draft.advance, NUMBER_FIELDS.maximumAdvanceDays, true),
    dailyLimit: whole(draft.dailyLimit, NUMBER_FIELDS.dailyLimit, true),
    weeklyLimit: whole(draft.weeklyLimit, NUMBER_FIELDS.weeklyLimit, true),
    enforceOnOwnBookings: draft.enforce,
  };
  const fieldOf = (path: string): string | null => {
    if (path === 'timeZone') return 'wh-zone';
    if (path === 'weeklyHours') return 'wh-weekly';
    if (path === 'dateOverrides') return 'wh-overrides';
    if (path in NUMBER_FIELDS) return NUMBER_FIELDS[path as keyof typeof NUMBER_FIELDS];
    const weekly = /^weeklyHours\[(\d+)\]\.(start|end|day)$/.exec(path);
    if (weekly) {
      const row = rows[Number(weekly[1])];
      return row ? weeklyId(row[0], row[1], weekly[2] === 'end' ? 'end' : 'start') : 'wh-weekly';
    }
    const override = /^dateOverrides\[(\d+)\]\.(?:date|hours)$/.exec(path);
    if (override) return overrideId(Number(override[1]), 'date');
    const hours = /^dateOverrides\[(\d+)\]\.hours\[(\d+)\]\.(start|end)$/.exec(path);
    if (hours) return overrideId(Number(hours[1]), `${Number(hours[2])}-${hours[3] as 'start' | 'end'}`);
    return null;
  };
  return { input, fieldOf, problems };
}

/** The server's field errors placed on the form; what names no field of it is said above the form. */
export function placeErrors(fields: Record<string, string>, fieldOf: (path: string) => string | null): { errors: FormErrors; unplaced: string[] } {
  const errors: FormErrors = {};
  const unplaced: string[] = [];
  for (const [path, message] of Object.entries(fields)) {
    const id = fieldOf(path);
    const sentence = `${message.charAt(0).toUpperCase()}${message.slice(1)}.`;
    if (id && !errors[id]) errors[id] = sentence;
    else unplaced.push(`${path} ${message}.`);
  }
  return { errors, unplaced };
}
