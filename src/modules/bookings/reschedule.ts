import { AppError, type FieldErrors } from '../../platform/errors.js';
import { checkRange } from './input-checks.js';
import { countOf, expandRule, instancesBefore, parseRule, RecurrenceError, ruleWith, shiftedWithSeries, type ParsedRule, type Slot } from './recurrence.js';

/**
 * Reschedule: what moving a booking does, planned here (pure: no I/O) and written by `reschedule_booking` under the
 * agent's row lock.
 *
 * - A single booking moves to the new range and keeps its id.
 * - `series` (a recurring booking's default): the whole series moves; the new range is its new first occurrence
 *   (DTSTART) and the length of every occurrence. The RRULE stays as written (its DTSTART line follows the new
 *   start in its zone), and each EXDATE moves with the series on the zone's wall clock (same number of days, same
 *   change of time of day), so removed occurrences stay removed. Occurrences already past move too: use
 *   `following` to keep the past.
 * - `occurrence`: the occurrence starting at `occurrenceStartsAt` leaves the series (an EXDATE, as cancelling it
 *   would) and becomes a single booking of its own (a new id) with the new range. The series keeps its id.
 * - `following` ("this and following"): the series keeps its occurrences before `occurrenceStartsAt` (its RRULE ends
 *   with COUNT = the rule's instances before it, replacing COUNT or UNTIL; the EXDATEs before it stay), and a new
 *   series (a new id) starts at the new range with the same RRULE (COUNT reduced by the instances kept, UNTIL as it
 *   was) and the later EXDATEs, moved as for `series`. On the first occurrence it is `series`.
 */
export type RescheduleScope = 'series' | 'occurrence' | 'following';
export const RESCHEDULE_SCOPES: readonly RescheduleScope[] = ['series', 'occurrence', 'following'];

export interface RescheduleInput {
  bookingId: string;
  startsAt: Date;
  endsAt: Date;
  scope?: RescheduleScope | undefined;
  /** `occurrence` and `following`: the start of the occurrence they begin at. */
  occurrenceStartsAt?: Date | undefined;
  /** Optimistic concurrency: the version the caller saw (REST If-Match). Absent: the move applies to whatever is current. */
  expectedVersion?: number | undefined;
}

/** The booking as it is before the move. */
export interface CurrentBooking {
  startsAt: Date;
  endsAt: Date;
  rrule: string | null;
  exdates: readonly string[];
}

/** What `reschedule_booking` writes. */
export interface ReschedulePlan {
  scope: RescheduleScope;
  occurrence: Date | null;
  startsAt: Date;
  endsAt: Date;
  rrule: string | null;
  exdates: string[];
  slots: Slot[];
  /** `following`: what the old series keeps. */
  keptRrule: string | null;
  keptExdates: string[] | null;
}

export interface PlanLimits {
  horizonDays: number;
  maxOccurrences: number;
  now: Date;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** The request's own checks: a valid range, a known scope, and the occurrence the scope needs. */
export function checkRescheduleInput(input: RescheduleInput): void {
  const fields: FieldErrors = {};
  checkRange(input.startsAt, input.endsAt, fields);
  if (input.scope !== undefined && !RESCHEDULE_SCOPES.includes(input.scope)) fields.scope = `must be one of ${RESCHEDULE_SCOPES.join(', ')}`;
  if ((input.scope === 'occurrence' || input.scope === 'following') && input.occurrenceStartsAt === undefined) {
    fields.occurrenceStartsAt = `is required with scope ${input.scope}`;
  } else if (input.occurrenceStartsAt !== undefined && Number.isNaN(input.occurrenceStartsAt.getTime())) {
    fields.occurrenceStartsAt = 'must be an RFC 3339 date-time with a time-zone offset';
  }
  if (input.expectedVersion !== undefined && !(Number.isInteger(input.expectedVersion) && input.expectedVersion >= 1)) {
    fields.expectedVersion = 'must be a positive integer';
  }
  if (Object.keys(fields).length) throw AppError.validation(fields);
}

function parseStored(rrule: string, startsAt: Date): ParsedRule {
  try {
    return parseRule(rrule, startsAt);
  } catch (error) {
    if (!(error instanceof RecurrenceError)) throw error;
    throw new AppError('bad_rrule', `the stored rule does not parse (${error.message}); cancel the booking and create it again`);
  }
}

/** A series' slots up to the horizon, as create writes them (a year ahead of its start or of now). */
function seriesSlots(rule: ParsedRule, range: Slot, excluded: readonly Date[], limits: PlanLimits): Slot[] {
  const horizonStart = Math.max(limits.now.getTime(), range.startsAt.getTime());
  const slots = expandRule(rule, range, { before: new Date(horizonStart + limits.horizonDays * DAY_MS), limit: limits.maxOccurrences + 1, excluded });
  if (slots.length > limits.maxOccurrences) {
    throw AppError.validation({ startsAt: `the moved series expands to more than ${limits.maxOccurrences} occurrences within ${limits.horizonDays} days` });
  }
  return slots;
}

/** Plans a reschedule of `current` (see the header). */
export function planReschedule(current: CurrentBooking, input: RescheduleInput, limits: PlanLimits): ReschedulePlan {
  const range = { startsAt: input.startsAt, endsAt: input.endsAt };
  if (!current.rrule) {
    if (input.scope === 'occurrence' || input.scope === 'following') {
      throw AppError.validation({ scope: `is for recurring bookings; this one is single: leave scope out` });
    }
    return { scope: 'series', occurrence: null, ...range, rrule: null, exdates: [], slots: [range], keptRrule: null, keptExdates: null };
  }
  const rule = parseStored(current.rrule, current.startsAt);
  const exdates = current.exdates.map((date) => new Date(date));
  const scope = input.scope ?? 'series';
  let occurrence: Date | null = null;
  if (scope !== 'series') {
    const at = input.occurrenceStartsAt!;
    const found = expandRule(rule, current, { from: at, limit: 1, excluded: exdates })[0];
    if (!found || found.startsAt.getTime() !== at.getTime()) throw new AppError('not_found', `the booking has no occurrence starting at ${at.toISOString()}`);
    occurrence = at;
  }
  if (scope === 'occurrence') {
    return { scope, occurrence, ...range, rrule: null, exdates: [], slots: [range], keptRrule: null, keptExdates: null };
  }
  if (scope === 'series' || occurrence!.getTime() === current.startsAt.getTime()) {
    const rrule = ruleWith(current.rrule, { startsAt: input.startsAt });
    const moved = exdates.map((date) => shiftedWithSeries(date, rule.zone, current.startsAt, input.startsAt));
    return {
      scope: 'series',
      occurrence: null,
      ...range,
      rrule,
      exdates: moved.map((date) => date.toISOString()),
      slots: seriesSlots(parseStored(rrule, input.startsAt), range, moved, limits),
      keptRrule: null,
      keptExdates: null,
    };
  }
  const split = occurrence!;
  const kept = instancesBefore(rule, current, split);
  const count = countOf(current.rrule);
  const rrule = ruleWith(current.rrule, { startsAt: input.startsAt, ...(count === undefined ? {} : { count: Math.max(1, count - kept) }) });
  const later = exdates.filter((date) => date >= split).map((date) => shiftedWithSeries(date, rule.zone, split, input.startsAt));
  return {
    scope: 'following',
    occurrence: split,
    ...range,
    rrule,
    exdates: later.map((date) => date.toISOString()),
    slots: seriesSlots(parseStored(rrule, input.startsAt), range, later, limits),
    // The split is after the first occurrence, so at least DTSTART is kept (COUNT counts it).
    keptRrule: ruleWith(current.rrule, { count: kept }),
    keptExdates: current.exdates.filter((date) => new Date(date) < split),
  };
}
