import { AFTER_QUERY_PARAMETER, NEXT_PAGE_LINK_HEADER } from '../../../platform/http/next-page-link.js';
import { SECURITY } from '../../../platform/http/openapi.js';
import { BOOKING_LIMITS } from '../booking.service.js';
import { BOOKING_FIELDS, BOOKING_STATUSES } from '../booking.shape.js';
import { errorResponses } from '../../../platform/http/error-schemas.js';
import { IDEMPOTENCY_KEY_HEADER } from '../../../platform/api-limits.js';
import { IDEMPOTENCY_TTL_MS } from '../idempotency.js';
import { BOOKABLE_TIME } from '../input-checks.js';

const dateTime = { type: 'string', format: 'date-time' } as const;
const bookableTime = `From ${BOOKABLE_TIME.from.toISOString()} and before ${BOOKABLE_TIME.before.toISOString()}`;

const exampleBooking = {
  id: '0f9c8a52-5f7e-4a43-9d1e-2b7f6c3d9a10',
  agentId: '6c1d4c1e-2d3b-4f6a-8e0a-5b9d7e2f1c34',
  startsAt: '2031-05-06T14:00:00.000Z',
  endsAt: '2031-05-06T14:30:00.000Z',
  status: 'confirmed',
  rrule: null,
  warningSentAt: null,
  createdAt: '2031-05-01T09:12:44.310Z',
} as const;

/**
 * `Idempotency-Key` on the creations that replay (bookings, proposals): the stored first answer is what a
 * retry after a lost response gets.
 */
export const idempotencyKeyHeader = {
  ...IDEMPOTENCY_KEY_HEADER,
  description:
    `Makes a retry safe: the same key with the same body within ${IDEMPOTENCY_TTL_MS / 3_600_000} hours answers the first success again and creates nothing more; ` +
    'the same key with another body is 409 `conflict`. Keys are the caller’s own (another agent’s equal key is another key).',
  examples: ['2f6d1c9e-booking-0001'],
} as const;

/** Seed 000 `BookingCreate`: no other properties allowed (an rrule comes only through GraphQL). */
export const bookingCreateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['agentId', 'startsAt', 'endsAt'],
  properties: {
    agentId: { type: 'string', minLength: 1, maxLength: BOOKING_LIMITS.agentIdMaxLength, description: 'The caller’s own id (another agent’s is 403 `forbidden`).' },
    startsAt: { ...dateTime, description: `The first instant of the slot, with an offset. ${bookableTime}.` },
    endsAt: { ...dateTime, description: 'The instant the slot ends (not included); after startsAt.' },
  },
  examples: [{ agentId: exampleBooking.agentId, startsAt: '2031-05-06T16:00:00+02:00', endsAt: '2031-05-06T16:30:00+02:00' }],
} as const;

const FIELD_SCHEMAS = {
  id: { type: 'string' },
  agentId: { type: 'string', minLength: 1, maxLength: BOOKING_LIMITS.agentIdMaxLength },
  status: { type: 'string', enum: BOOKING_STATUSES },
} as const;
const KIND_SCHEMAS = { id: { type: 'string' }, text: { type: 'string' }, status: { type: 'string' }, instant: dateTime, integer: { type: 'integer' } } as const;
/** The fields of seed 000's BookingItem (the REST body admits no other). */
const SEED_FIELDS = BOOKING_FIELDS.filter((field) => !('beyondSeed' in field && field.beyondSeed));

function fieldSchema(field: (typeof BOOKING_FIELDS)[number]) {
  const known: { type: string } = (FIELD_SCHEMAS as Record<string, { type: string }>)[field.name] ?? KIND_SCHEMAS[field.kind];
  const schema = 'description' in field ? { ...known, description: field.description } : known;
  return field.nullable ? { ...schema, type: [schema.type, 'null'] } : schema;
}

/**
 * Seed 000 `BookingItem`, written from the shape (booking.shape.ts): every field, all required but those the
 * seed lets be absent. Services answer the item with its times already as ISO strings, sent as they are.
 */
export const bookingItem = {
  type: 'object',
  additionalProperties: false,
  required: SEED_FIELDS.filter((field) => !('optionalInSeed' in field && field.optionalInSeed)).map((field) => field.name),
  properties: Object.fromEntries(SEED_FIELDS.map((field) => [field.name, fieldSchema(field)])),
  examples: [exampleBooking],
} as const;

/**
 * The booking with every field of the shape, `version` included: for answers seed 000 does not shape (the
 * change feed), whose clients keep a copy and need the version a reschedule's If-Match names.
 */
export const fullBookingItem = {
  type: 'object',
  additionalProperties: false,
  required: BOOKING_FIELDS.filter((field) => !('optionalInSeed' in field && field.optionalInSeed)).map((field) => field.name),
  properties: Object.fromEntries(BOOKING_FIELDS.map((field) => [field.name, fieldSchema(field)])),
  examples: [{ ...exampleBooking, version: 1 }],
} as const;

const limit = (defaultValue: number, items: string) =>
  ({ type: 'integer', minimum: 1, maximum: BOOKING_LIMITS.listMax, default: defaultValue, description: `The most ${items} one page holds.` }) as const;

const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1, description: 'The booking’s id.', examples: [exampleBooking.id] } },
} as const;

const idempotencyHeader = {
  type: 'object',
  properties: { 'idempotency-key': idempotencyKeyHeader },
} as const;

/** A single booking's version, which seed 000's body has no room for: the strong ETag `"<version>"`. */
const ETAG_HEADER = {
  ETag: { type: 'string', description: 'The booking’s version as a strong entity tag, `"<version>"`: send it back as If-Match to reschedule only that version.' },
} as const;

/** Codes a write on a calendar with rules may answer 409 with (see the README, scheduling rules). */
const RULE_REFUSALS =
  '409 `slot_taken` (a booking or a live hold overlaps), `buffer_conflict` (only a buffer overlaps), and, when the calendar’s rules bind the caller ' +
  '(another agent’s calendar, or the caller’s own with `enforceOnOwnBookings`): `outside_working_hours`, `notice_too_short`, `too_far_ahead`, ' +
  '`daily_limit_reached`, `weekly_limit_reached`. The message names what is in the way.';

const SLOT_EXAMPLE = { startsAt: '2031-03-04T10:00:00Z', endsAt: '2031-03-04T10:30:00Z' } as const;

export const createBookingRoute = {
  operationId: 'createBooking',
  summary: 'Create a booking on the caller’s calendar',
  description:
    'Books [startsAt, endsAt) on the caller’s calendar, confirmed at once. A slot that overlaps one of the caller’s confirmed bookings ' +
    '(or an occurrence of a series) is 409 `slot_taken`: the database’s exclusion constraint decides, races included. ' +
    'Past BOOKING_CAP live bookings (a booking counts until it has ended) the answer is 429 `booking_cap_reached`. ' +
    'Subscribers of the caller’s booking events get `booking.created`. Answers the booking in UTC, its version as the ETag. ' +
    `An agent without rules is bound by overlaps only. ${RULE_REFUSALS}`,
  tags: ['scheduling'],
  security: SECURITY.agent,
  headers: idempotencyHeader,
  body: bookingCreateBody,
  response: { 201: { ...bookingItem, description: 'The booking, confirmed', headers: ETAG_HEADER }, ...errorResponses(400, 401, 403, 409, 429) },
} as const;

export const getBookingRoute = {
  operationId: 'getBooking',
  summary: 'One of the caller’s bookings, with its version as the ETag',
  description:
    'The booking as it is now, its version as a strong ETag (`"<version>"`, raised by every reschedule): send it back as `If-Match` to reschedule ' +
    'only that version. Only the owner may read it (403 `forbidden`); an unknown id is 404 `not_found`.',
  tags: ['scheduling'],
  security: SECURITY.agent,
  params: idParams,
  response: { 200: { ...bookingItem, headers: ETAG_HEADER }, ...errorResponses(401, 403, 404) },
} as const;

export const createGroupBookingRoute = {
  operationId: 'createGroupBooking',
  summary: 'Book the same slot on several calendars, all or none',
  description:
    `One booking per calendar of \`agentIds\` (1 to ${BOOKING_LIMITS.groupMaxAgents}; the caller’s own and its children’s, else 403), ` +
    'in one transaction, with one booking.created event per calendar; nothing is written if any calendar refuses. Each calendar’s rules bind ' +
    `the caller unless it is the caller’s own calendar (and it does not enforce them on itself). ${RULE_REFUSALS} ` +
    'A repeat with the same Idempotency-Key and body answers the first result.',
  tags: ['scheduling'],
  security: SECURITY.agent,
  headers: idempotencyHeader,
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['agentIds', 'startsAt', 'endsAt'],
    properties: {
      agentIds: {
        type: 'array',
        minItems: 1,
        maxItems: BOOKING_LIMITS.groupMaxAgents,
        items: { type: 'string', minLength: 1, maxLength: BOOKING_LIMITS.agentIdMaxLength },
        description: 'The calendars: the caller’s own and its children’s.',
      },
      startsAt: dateTime,
      endsAt: dateTime,
    },
    examples: [{ agentIds: ['4f8c2a8e-1d3b-4c5a-9e7f-2b6d8a0c1e34', 'b71e0d92-5a4f-4e3b-8c1d-6f2a9e8b7c05'], ...SLOT_EXAMPLE }],
  },
  response: {
    201: {
      description: 'The bookings, in agent id order',
      type: 'object',
      additionalProperties: false,
      required: ['items'],
      properties: { items: { type: 'array', items: bookingItem } },
    },
    ...errorResponses(400, 401, 403, 409, 429),
  },
} as const;

export const rescheduleBookingRoute = {
  operationId: 'rescheduleBooking',
  summary: 'Move a booking to a new range, keeping its id',
  description:
    'Under every rule a create on that calendar by the caller faces; the booking keeps its id and its version rises. With `If-Match: "<version>"` ' +
    '(the ETag of the booking) only that version is moved: another is 412 `version_mismatch`. A recurring booking moves as a whole (`scope` ' +
    '`series`, the default: EXDATEs move with it), or one occurrence leaves the series as a booking of its own (`occurrence`), or the series ' +
    'is split there (`following`: a new series from the new range); those two answer the new booking. One booking.rescheduled event carries ' +
    `\`data.previous\`, the range before. ${RULE_REFUSALS}`,
  tags: ['scheduling'],
  security: SECURITY.agent,
  params: idParams,
  headers: {
    type: 'object',
    properties: { 'if-match': { type: 'string', maxLength: 100, description: 'The ETag of the version to move (`"3"`), or `*`.' } },
  },
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['startsAt', 'endsAt'],
    properties: {
      startsAt: dateTime,
      endsAt: dateTime,
      scope: { type: 'string', enum: ['series', 'occurrence', 'following'], description: 'For a recurring booking; `series` when absent.' },
      occurrenceStartsAt: { ...dateTime, description: 'With `occurrence` and `following`: the start of the occurrence to move.' },
    },
    examples: [SLOT_EXAMPLE, { startsAt: '2031-03-11T11:00:00Z', endsAt: '2031-03-11T11:30:00Z', scope: 'occurrence', occurrenceStartsAt: '2031-03-11T10:00:00Z' }],
  },
  response: { 200: { ...bookingItem, headers: ETAG_HEADER }, ...errorResponses(400, 401, 403, 404, 409, 412) },
} as const;

export const listBookingsRoute = {
  operationId: 'listBookings',
  summary: 'List the caller’s bookings, optionally those intersecting [from, to)',
  description:
    'By `startsAt`, then id. When more bookings follow than `limit`, the answer carries `Link: <…>; rel="next"`: the URL of the next page ' +
    '(the same query, `after` set). Its cursor is the `endCursor` of GraphQL’s `bookings` and the `nextCursor` of MCP’s `list_bookings`.',
  tags: ['scheduling'],
  security: SECURITY.agent,
  querystring: {
    type: 'object',
    properties: {
      limit: limit(BOOKING_LIMITS.listDefault, 'bookings'),
      from: { ...dateTime, description: 'Only bookings that end after this instant.', examples: ['2031-05-01T00:00:00Z'] },
      to: { ...dateTime, description: 'Only bookings that start before this instant (at or after `from`).', examples: ['2031-06-01T00:00:00Z'] },
      after: AFTER_QUERY_PARAMETER,
    },
  },
  response: {
    200: {
      description: 'A page of bookings',
      headers: NEXT_PAGE_LINK_HEADER,
      type: 'object',
      additionalProperties: false,
      required: ['items'],
      properties: { items: { type: 'array', items: bookingItem } },
    },
    ...errorResponses(400, 401),
  },
} as const;

export const cancelBookingRoute = {
  operationId: 'cancelBooking',
  summary: 'Soft-cancel a booking (idempotent)',
  description:
    'Sets `status` to `cancelled` and keeps the row: the slot is free again at once. Cancelling a cancelled booking is 204 too. ' +
    'Only the owner may cancel (403 `forbidden`); an unknown id is 404 `not_found`. Subscribers get `booking.cancelled` (the first time only).',
  tags: ['scheduling'],
  security: SECURITY.agent,
  params: idParams,
  response: { 204: { type: 'null', description: 'Cancelled' }, ...errorResponses(401, 403, 404) },
} as const;

export const occurrencesRoute = {
  operationId: 'listOccurrences',
  summary: 'The next concrete slots of a booking, from now',
  description:
    'A series’ occurrences from now on, removed ones left out; a single booking is its own occurrence while it has not started. ' +
    'A cancelled booking has none. Only the owner may ask (403 `forbidden`). ' +
    'When more occurrences follow than `limit`, the answer carries `Link: <…>; rel="next"`: the URL of the next page.',
  tags: ['scheduling'],
  security: SECURITY.agent,
  params: idParams,
  querystring: { type: 'object', properties: { limit: limit(BOOKING_LIMITS.listDefault, 'occurrences'), after: AFTER_QUERY_PARAMETER } },
  response: {
    200: {
      description: 'A page of occurrences',
      headers: NEXT_PAGE_LINK_HEADER,
      type: 'object',
      additionalProperties: false,
      required: ['items'],
      properties: {
        items: {
          type: 'array',
          items: { type: 'object', additionalProperties: false, required: ['startsAt', 'endsAt'], properties: { startsAt: dateTime, endsAt: dateTime } },
        },
      },
      examples: [
        {
          items: [
            { startsAt: '2031-05-06T14:00:00.000Z', endsAt: '2031-05-06T14:30:00.000Z' },
            { startsAt: '2031-05-13T14:00:00.000Z', endsAt: '2031-05-13T14:30:00.000Z' },
          ],
        },
      ],
    },
    ...errorResponses(400, 401, 403, 404),
  },
} as const;
