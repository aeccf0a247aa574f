import type { ConstraintErrors } from '../../platform/errors.js';

/** The calendar rules PostgreSQL holds, by constraint name (migrations/), and what a client is told. */
export const BOOKING_CONSTRAINTS = {
  booking_slots_no_overlap: { code: 'slot_taken', message: 'the time range overlaps another booking or a live hold on that calendar (buffers included)' },
} as const satisfies ConstraintErrors;
