/**
 * The status report's own statements, run through the ORM's connection (`em.execute`): a probe and two
 * counters, read once per report, so no named statement is kept for them.
 */

/** The database probe: a round trip and nothing else; its latency is the report's. */
export const DATABASE_PROBE = 'select 1';

/** The report's usage counters: agents, and trades (accepted proposals). */
export const USAGE_COUNTS = `select (select count(*) from agents) as agents,
        (select count(*) from proposals where status = 'accepted') as trades`;
