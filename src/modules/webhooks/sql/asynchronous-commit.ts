/**
 * The first statement of the webhook bookkeeping functions (fan-out, claims, attempt records): their
 * transaction commits without waiting for its WAL flush, which the WAL writer does within
 * 3 × wal_writer_delay, together with others.
 *
 * Why it is safe: each of them is derived again from durable rows if a crash loses it. The event log
 * and its `webhook_fanout` row are written by the booking's own (durable) commit; a lost fan-out leaves
 * the event queued, a lost claim leaves the delivery due, a lost record leaves it pending: either way
 * the delivery is sent again, which at-least-once delivery allows (receivers deduplicate on
 * `webhook-id`). PostgreSQL keeps the order: a later durable commit flushes every earlier record, so
 * only the newest bookkeeping can be lost, never a hole before a durable write.
 *
 * Why it matters: each of these commits otherwise waits for a flush of its own, apart from the
 * bookings' group commits (1.1 extra WAL flushes per create in S5, 10 webhooks per agent).
 *
 * `set_config(…, true)` lasts until the end of the transaction, past the function's own exit (a
 * function's SET clause would be undone when it returns, before the commit).
 */
export const ASYNCHRONOUS_COMMIT = `perform set_config('synchronous_commit', 'off', true);`;

/** The same first statement for a function in `language sql`. */
export const ASYNCHRONOUS_COMMIT_SQL = `select set_config('synchronous_commit', 'off', true);`;
