/**
 * The JSON Schema of availability rules, for REST's body and response and MCP's arguments (one shape, rules.view.ts).
 * Only keywords that mean the same in draft-07 and 2020-12. The service checks what a schema cannot (order, overlap,
 * zones, dates) and names the field.
 */
import { RULE_LIMITS as L, WEEKDAYS } from './rules.view.js';

const time = (description: string) => ({ type: 'string', pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$|^24:00$', description }) as const;
const interval = {
  type: 'object',
  additionalProperties: false,
  required: ['start', 'end'],
  properties: { start: time('HH:MM, local wall clock'), end: time('HH:MM, after start; 24:00 is the end of the day') },
} as const;
const bounded = (min: number, max: number, description: string, nullable = false) =>
  ({ type: nullable ? ['integer', 'null'] : 'integer', minimum: min, maximum: max, description }) as const;

export const rulesInputProperties = {
  timeZone: { type: 'string', minLength: 1, maxLength: L.timeZoneMaxLength, description: 'IANA time zone of the hours, the dates and the days the limits count, e.g. Europe/Berlin.' },
  weeklyHours: {
    type: ['array', 'null'],
    maxItems: L.weeklyIntervals,
    description:
      `Working intervals per weekday (at most ${L.intervalsPerDay} a day, in order, apart). Null or absent: no weekly hours, every day is open ` +
      'unless a date override says otherwise; [] : no day is open but by an override.',
    items: { ...interval, required: ['day', 'start', 'end'], properties: { day: { type: 'string', enum: [...WEEKDAYS] }, ...interval.properties } },
  },
  dateOverrides: {
    type: 'array',
    maxItems: L.dateOverrides,
    description: `Dates whose hours replace their weekday's (at most ${L.dateOverrides}); no hours: the day is off.`,
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['date', 'hours'],
      properties: { date: { type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description: 'Local date YYYY-MM-DD.' }, hours: { type: 'array', maxItems: L.intervalsPerDay, items: interval } },
    },
  },
  bufferBeforeMinutes: bounded(0, L.bufferMaxMinutes, 'Kept free before each booking (held by the database); 0 by default.'),
  bufferAfterMinutes: bounded(0, L.bufferMaxMinutes, 'Kept free after each booking (held by the database); 0 by default.'),
  minimumNoticeMinutes: bounded(0, L.noticeMaxMinutes, 'A slot must start at least this long after now; 0 by default.'),
  maximumAdvanceDays: bounded(1, L.advanceMaxDays, 'A slot may start at most this many days (of 24 h) after now; null: no bound.', true),
  dailyLimit: bounded(1, L.dailyLimitMax, 'Bookings and live holds starting on one local day; null: no limit.', true),
  weeklyLimit: bounded(1, L.weeklyLimitMax, 'Bookings and live holds starting in one local ISO week (Monday to Sunday); null: no limit.', true),
  enforceOnOwnBookings: { type: 'boolean', description: 'Whether the rules bind the agent’s own creates too (buffers always do); false by default.' },
} as const;

export const RULES_EXAMPLE = {
  timeZone: 'Europe/Berlin',
  weeklyHours: [
    { day: 'monday', start: '09:00', end: '12:00' },
    { day: 'monday', start: '13:00', end: '17:00' },
    { day: 'tuesday', start: '09:00', end: '17:00' },
  ],
  dateOverrides: [
    { date: '2031-12-24', hours: [] },
    { date: '2031-12-27', hours: [{ start: '10:00', end: '14:00' }] },
  ],
  bufferBeforeMinutes: 10,
  bufferAfterMinutes: 5,
  minimumNoticeMinutes: 120,
  maximumAdvanceDays: 60,
  dailyLimit: 6,
  weeklyLimit: 20,
  enforceOnOwnBookings: false,
} as const;

export const rulesInputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['timeZone'],
  properties: rulesInputProperties,
} as const;

export const rulesViewSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'agentId',
    'timeZone',
    'weeklyHours',
    'dateOverrides',
    'bufferBeforeMinutes',
    'bufferAfterMinutes',
    'minimumNoticeMinutes',
    'maximumAdvanceDays',
    'dailyLimit',
    'weeklyLimit',
    'enforceOnOwnBookings',
    'updatedAt',
  ],
  properties: { agentId: { type: 'string' }, ...rulesInputProperties, updatedAt: { type: 'string', format: 'date-time' } },
} as const;
