/**
 * The one shape of a booking, from its row to every transport and every event payload: seed 000's
 * `BookingItem`, times as UTC ISO strings (`2031-05-06T14:00:00.000Z`). One list of fields writes all of
 * it, so a field cannot be in one place and missing from another:
 *
 * - the TypeScript type `BookingItem` and the row type `BookingRow`;
 * - the columns a statement selects (`bookingColumns`) and the JS row mapper (`bookingItemOfRow`);
 * - the SQL function `booking_item(bookings)` (sql/booking-item.function.ts), the only writer of an
 *   event's `data.booking`;
 * - REST's response schema (rest/booking.schemas.ts) and GraphQL's `Booking` fields (graphql/booking.types.ts).
 *
 * Adding a field: a line here, its column (entity and migration), and the emitted schemas.
 */
import { isoFromTimestamptz } from '../../platform/db/pg-timestamp.js';

/** `instant`: a timestamptz, written as its UTC ISO string; the others are written as they are. */
type FieldKind = 'id' | 'text' | 'status' | 'instant' | 'integer';

interface FieldSpec {
  /** The name every transport uses. */
  readonly name: string;
  readonly column: string;
  readonly kind: FieldKind;
  readonly nullable: boolean;
  /** REST: may be absent (seed 000 lets `rrule` be absent or null); every field is always sent. */
  readonly optionalInSeed?: boolean;
  /**
   * Not in seed 000's BookingItem, whose REST body admits no other property: REST leaves it out of the body (and
   * says it otherwise, `version` as the ETag); GraphQL, MCP and event payloads carry it.
   */
  readonly beyondSeed?: boolean;
  /** The field's description, in GraphQL's Booking and in the OpenAPI document's BookingItem alike. */
  readonly description?: string;
}

/** The statuses a booking of the seed has (`held` bookings have a shape of their own, see holds). */
export const BOOKING_STATUSES = ['confirmed', 'cancelled'] as const;
export type BookingStatus = (typeof BOOKING_STATUSES)[number];

export const BOOKING_FIELDS = [
  { name: 'id', column: 'id', kind: 'id', nullable: false },
  { name: 'agentId', column: 'agent_id', kind: 'id', nullable: false, description: 'Whose calendar holds it.' },
  { name: 'startsAt', column: 'starts_at', kind: 'instant', nullable: false, description: 'In UTC.' },
  { name: 'endsAt', column: 'ends_at', kind: 'instant', nullable: false, description: 'In UTC; not included in the slot.' },
  { name: 'status', column: 'status', kind: 'status', nullable: false, description: '`confirmed` or `cancelled`.' },
  { name: 'rrule', column: 'rrule', kind: 'text', nullable: true, optionalInSeed: true, description: 'The RFC 5545 recurrence rule of a series (DTSTART is startsAt); null for a single booking.' },
  { name: 'warningSentAt', column: 'warning_sent_at', kind: 'instant', nullable: true, description: 'When the booking.reminder event was sent; null before.' },
  { name: 'createdAt', column: 'created_at', kind: 'instant', nullable: false },
  {
    name: 'version',
    column: 'version',
    kind: 'integer',
    nullable: false,
    beyondSeed: true,
    description: 'Raised by every change of the booking. `rescheduleBooking` takes it as `expectedVersion` (REST: the ETag, sent back as If-Match).',
  },
] as const satisfies readonly FieldSpec[];

type Field = (typeof BOOKING_FIELDS)[number];
type ValueOf<F extends Field> = F['kind'] extends 'status' ? BookingStatus : F['kind'] extends 'integer' ? number : string;
type RowValueOf<F extends Field> = F['kind'] extends 'instant' ? Date | string : ValueOf<F>;
type OrNull<F extends Field, V> = F['nullable'] extends true ? V | null : V;

/** Seed 000 `BookingItem`: what services return, REST and MCP send, GraphQL's `Booking` carries, and events hold. */
export type BookingItem = { [F in Field as F['name']]: OrNull<F, ValueOf<F>> };

/** The names of seed 000's BookingItem fields: every field of the shape but those beyond the seed. */
export const SEED_BOOKING_FIELD_NAMES: readonly string[] = BOOKING_FIELDS.filter((field) => !('beyondSeed' in field && field.beyondSeed)).map((field) => field.name);

/**
 * The item as seed 000 and the contract shape it where they carry it (a webhook's `data.booking`): its
 * fields only, so a receiver comparing it with the REST item sees the same object.
 */
export function inSeedShape(item: BookingItem): Partial<BookingItem> {
  const shaped: Record<string, unknown> = {};
  for (const name of SEED_BOOKING_FIELD_NAMES) if (name in item) shaped[name] = item[name as keyof BookingItem];
  return shaped as Partial<BookingItem>;
}

/** A `bookings` row as statements select it (`bookingColumns`); timestamps as the pool returns them. */
export type BookingRow = { [F in Field as F['column']]: OrNull<F, RowValueOf<F>> };

/** The columns of the shape, for a select list; `alias` qualifies them (`b.id, b.agent_id, …`). */
export function bookingColumns(alias?: string): string {
  return BOOKING_FIELDS.map((field) => (alias ? `${alias}.${field.column}` : field.column)).join(', ');
}

const IDENTIFIER = /^[a-z_][A-Za-z_]*$/;

/** The mapper's body, an object literal written from the field list (the names are checked identifiers). */
function mapperSource(fields: readonly Field[] = BOOKING_FIELDS): string {
  const entries = fields.map((field) => {
    if (!IDENTIFIER.test(field.name) || !IDENTIFIER.test(field.column)) throw new Error(`booking field ${field.name} (${field.column}) is not an identifier`);
    const value = `row.${field.column}`;
    if (field.kind !== 'instant') return `${field.name}: ${value} ?? null`;
    return field.nullable ? `${field.name}: ${value} == null ? null : iso(${value})` : `${field.name}: iso(${value})`;
  });
  return `return function bookingItemOfRow(row) { return { ${entries.join(', ')} }; };`;
}

/**
 * A row in the shape, times straight from PostgreSQL's text to ISO (no Date in between: see
 * `isoFromTimestamptz`). Compiled once from the field list into one object literal, as
 * fast-json-stringify compiles serialisers: a loop over the fields made a page of 50 rows take 79
 * instead of 46 µs here (the hot list's whole mapping; test/unit/booking-shape.test.ts holds its output).
 */
export const bookingItemOfRow = new Function('iso', mapperSource())(isoFromTimestamptz) as (row: BookingRow) => BookingItem;

export type BookingFieldName = Field['name'];

/** The fields every read of a page carries: its order and cursor (`startsAt`, `id`) and its owner (`agentId`). */
const KEY_FIELDS = ['id', 'agentId', 'startsAt'] as const satisfies readonly BookingFieldName[];

/** A booking read with some of its fields: the key ones always, the others as a projection chose them. */
export type ProjectedBookingItem = Pick<BookingItem, (typeof KEY_FIELDS)[number]> & Partial<BookingItem>;

/**
 * Which of a booking's fields a read selects and maps: its columns for the select list, and the row
 * mapper of those fields alone. A GraphQL page asks PostgreSQL only for the fields its client selected:
 * bench S3's five fields of nine took the list statement from 0.19–0.22 to 0.16 ms of PostgreSQL's CPU,
 * and the pool's parsing and the mapping with it (each column is text to read, each instant a string to
 * rewrite).
 */
export interface BookingProjection<Item extends ProjectedBookingItem = ProjectedBookingItem> {
  /** Names the projection in a statement's name: '' for every field, else the fields as a bit mask. */
  readonly key: string;
  readonly columns: string;
  readonly itemOfRow: (row: BookingRow) => Item;
}

/** Every field: what REST, MCP and events carry. */
export const ALL_BOOKING_FIELDS: BookingProjection<BookingItem> = { key: '', columns: bookingColumns(), itemOfRow: bookingItemOfRow };

// One per set of fields, made when first asked for: at most 2^6 (the fields beyond the key ones).
const projections = new Map<number, BookingProjection>([[(1 << BOOKING_FIELDS.length) - 1, ALL_BOOKING_FIELDS]]);

/** The projection of the key fields and those of `names` that are booking fields (others, such as `agent` or `__typename`, are not columns). */
export function bookingProjection(names: Iterable<string>): BookingProjection {
  const wanted = new Set<string>([...KEY_FIELDS, ...names]);
  let mask = 0;
  BOOKING_FIELDS.forEach((field, index) => {
    if (wanted.has(field.name)) mask |= 1 << index;
  });
  let projection = projections.get(mask);
  if (!projection) {
    const fields = BOOKING_FIELDS.filter((_field, index) => mask & (1 << index));
    projection = {
      key: mask.toString(16),
      columns: fields.map((field) => field.column).join(', '),
      itemOfRow: new Function('iso', mapperSource(fields))(isoFromTimestamptz) as (row: BookingRow) => ProjectedBookingItem,
    };
    projections.set(mask, projection);
  }
  return projection;
}

/** The SQL expression of one field of the row `alias`, as `booking_item()` writes it into JSON (instants by iso_instant()). */
function fieldSql(field: Field, alias: string): string {
  const column = `${alias}.${field.column}`;
  return field.kind === 'instant' ? `iso_instant(${column})` : column;
}

/** The body of `booking_item(b bookings)`: a `jsonb_build_object` of every field, in the shape's order. */
export function bookingItemSql(alias: string): string {
  return `jsonb_build_object(${BOOKING_FIELDS.map((field) => `'${field.name}', ${fieldSql(field, alias)}`).join(', ')})`;
}
