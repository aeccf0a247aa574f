/** The JSON schema of the availability route: validation, serialisation and the OpenAPI document. */
import { SECURITY } from '../../../platform/http/openapi.js';
import { AVAILABILITY_LIMITS as L } from '../availability.service.js';
import { SCHEDULING_LIMITS } from '../../../platform/api-limits.js';
import { errorResponses } from '../../../platform/http/error-schemas.js';

const dateTime = { type: 'string', format: 'date-time' } as const;

/** Seed 000's `OccurrenceSlot` shape: a slot is a slot. */
const freeSlot = { type: 'object', additionalProperties: false, required: ['startsAt', 'endsAt'], properties: { startsAt: dateTime, endsAt: dateTime } } as const;

/** What a search for common free time asks: the route's query here, `POST /api/proposals/first-available`'s body too. */
export const availabilitySearchProperties = {
  duration: { type: 'integer', minimum: L.durationMin, maximum: L.durationMax, description: 'Slot length in minutes.', examples: [30] },
  from: { ...dateTime, description: 'Where the search window starts (included).', examples: ['2031-05-06T08:00:00Z'] },
  to: { ...dateTime, description: `Where it ends (not included): after from, at most ${L.maxWindowDays} days later.`, examples: ['2031-05-06T18:00:00Z'] },
  granularity: {
    type: 'integer',
    minimum: L.granularityMin,
    maximum: L.granularityMax,
    default: L.granularityDefault,
    description: 'Minutes between candidate starts (multiples of it since 1970-01-01T00:00Z).',
    examples: [15],
  },
} as const;

export const availabilityRoute = {
  operationId: 'getAvailability',
  summary: 'Free slots common to the caller and other agents',
  description:
    `Slots of \`duration\` minutes free on the caller's calendar and on every agent in \`agents\` (at most ${L.maxOtherAgents}) inside [from, to) ` +
    `(at most ${L.maxWindowDays} days), starting on the \`granularity\` grid (multiples of it since 1970-01-01T00:00Z), earliest first. ` +
    'Every free grid start is listed, so slots overlap when the duration is longer than the step. Busy is what the overlap constraint ' +
    'sees: confirmed bookings and their occurrences, not cancelled bookings or removed occurrences. Pass `nextCursor` as `after` for the next page. ' +
    'An agent that does not share its free/busy with the caller, or does not exist, is 403 `forbidden` (the same answer for both); ' +
    `more than ${L.maxBookedSlots} booked slots of the agents asked inside the window is a 400 naming \`to\`.`,
  tags: ['availability'],
  security: SECURITY.agent,
  querystring: {
    type: 'object',
    additionalProperties: false,
    required: ['duration', 'from', 'to'],
    properties: {
      agents: {
        type: 'string',
        maxLength: L.maxOtherAgents * (SCHEDULING_LIMITS.agentIdMaxLength + 2),
        description: `Agent ids separated by commas, at most ${L.maxOtherAgents}; the caller is always included and may be left out.`,
        examples: ['9e4a7b20-1f3c-4d8e-a6b5-c2d0f7e1a389,1d7c3e5a-8b2f-4a6d-9c0e-7f1b4a2d6e85'],
      },
      ...availabilitySearchProperties,
      limit: { type: 'integer', minimum: 1, maximum: L.firstMax, default: L.firstDefault, description: 'The most slots one page holds.' },
      after: { type: 'string', minLength: 1, maxLength: 100, description: 'The `nextCursor` of the previous page.' },
    },
  },
  response: {
    200: {
      description: 'A page of common free slots, earliest first',
      type: 'object',
      additionalProperties: false,
      required: ['items', 'nextCursor'],
      properties: {
        items: { type: 'array', maxItems: L.firstMax, items: freeSlot },
        nextCursor: { type: ['string', 'null'], description: 'Pass as `after` for the next page; null on the last page.' },
      },
      examples: [
        {
          items: [
            { startsAt: '2031-05-06T09:00:00.000Z', endsAt: '2031-05-06T09:30:00.000Z' },
            { startsAt: '2031-05-06T09:15:00.000Z', endsAt: '2031-05-06T09:45:00.000Z' },
          ],
          nextCursor: null,
        },
      ],
    },
    ...errorResponses(400, 401, 403),
  },
} as const;

/** One reason of a slot check; `code` names the rule (the error code a writer refuses with), the rest its cause. */
const slotReason = {
  type: 'object',
  additionalProperties: false,
  required: ['code', 'message'],
  properties: {
    code: {
      type: 'string',
      enum: ['slot_taken', 'buffer_conflict', 'outside_working_hours', 'notice_too_short', 'too_far_ahead', 'daily_limit_reached', 'weekly_limit_reached'],
    },
    message: { type: 'string' },
    startsAt: dateTime,
    bookingId: { type: 'string', description: 'slot_taken, buffer_conflict: the booking in the way.' },
    holdId: { type: 'string', description: 'slot_taken, buffer_conflict: the live hold in the way.' },
    heldByCaller: { type: 'boolean', description: 'Whether that hold is the caller’s (confirm it to book the time).' },
    earliestStartsAt: { ...dateTime, description: 'notice_too_short: the earliest start the notice allows now.' },
    latestStartsAt: { ...dateTime, description: 'too_far_ahead: the latest start the advance allows now.' },
    limit: { type: 'integer' },
    date: { type: 'string', description: 'daily_limit_reached: the agent’s local date.' },
    weekOf: { type: 'string', description: 'weekly_limit_reached: the local Monday of the week.' },
  },
} as const;

export const slotCheckRoute = {
  operationId: 'checkSlot',
  summary: 'Why not this slot: what keeps [startsAt, endsAt) on an agent’s calendar from being taken by the caller',
  description:
    'Every reason a booking of exactly this range by the caller would be refused now, in the order the writers refuse by (at most ' +
    `${L.maxReasons}), each with its cause: the booking or live hold in the way (\`slot_taken\`), a buffer (\`buffer_conflict\`), the working hours, ` +
    'the minimum notice, the maximum advance, the daily or weekly limit. `available` is true when there is none. The agent’s rules bind the ' +
    'caller unless the calendar is its own (and it does not enforce them on itself). An agent that does not share its free/busy with the ' +
    'caller, or does not exist, is 403 `forbidden` (the same answer for both, as for `GET /api/availability`). The same evaluation as the writers.',
  tags: ['availability'],
  security: SECURITY.agent,
  querystring: {
    type: 'object',
    additionalProperties: false,
    required: ['startsAt', 'endsAt'],
    properties: {
      agent: { type: 'string', minLength: 1, maxLength: SCHEDULING_LIMITS.agentIdMaxLength, description: 'The calendar; the caller’s own when absent.' },
      startsAt: { ...dateTime, description: 'The first instant of the candidate slot, with an offset.', examples: ['2031-03-04T18:00:00Z'] },
      endsAt: { ...dateTime, description: 'The instant the candidate slot ends (not included); after startsAt.', examples: ['2031-03-04T18:30:00Z'] },
    },
    examples: [{ agent: '4f8c2a8e-1d3b-4c5a-9e7f-2b6d8a0c1e34', startsAt: '2031-03-04T18:00:00Z', endsAt: '2031-03-04T18:30:00Z' }],
  },
  response: {
    200: {
      type: 'object',
      additionalProperties: false,
      required: ['agentId', 'startsAt', 'endsAt', 'available', 'reasons'],
      properties: {
        agentId: { type: 'string' },
        startsAt: dateTime,
        endsAt: dateTime,
        available: { type: 'boolean' },
        reasons: { type: 'array', maxItems: L.maxReasons, items: slotReason },
      },
      examples: [
        {
          agentId: '4f8c2a8e-1d3b-4c5a-9e7f-2b6d8a0c1e34',
          startsAt: '2031-03-04T18:00:00.000Z',
          endsAt: '2031-03-04T18:30:00.000Z',
          available: false,
          reasons: [
            { code: 'outside_working_hours', startsAt: '2031-03-04T18:00:00.000Z', message: 'the slot starting 2031-03-04T18:00:00.000Z is outside the working hours' },
            { code: 'daily_limit_reached', startsAt: '2031-03-04T18:00:00.000Z', limit: 6, date: '2031-03-04', message: 'the limit of 6 bookings on 2031-03-04 (local date) is reached' },
          ],
        },
      ],
    },
    ...errorResponses(400, 401, 403),
  },
} as const;
