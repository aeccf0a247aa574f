import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DateTime } from 'luxon';
import { zoneTransitions } from '../../../src/modules/bookings/index.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

/**
 * The working time common to several agents (common_working_ranges, which availability reads for every agent it
 * asks about at once) equals the intersection of each agent's own working time (agent_working_ranges, which the
 * agreement test holds to the slow reference minute by minute). common_working_ranges intersects the agents of one
 * zone on the wall clock, weekday by weekday and on the dates some of them override, before their hours become
 * instants; this holds that shortcut to the definition: random weekly hours, overrides (days off, other hours) and
 * windows around daylight-saving changes, most agents sharing a zone with another. Seeded; FUZZ_SEED and FUZZ_RUNS as
 * in the other generated tests.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261127);
const RUNS = Number(process.env.FUZZ_RUNS ?? 20) * 3;
const ZONES = ['America/New_York', 'Europe/Berlin', 'Australia/Sydney', 'America/Santiago', 'Australia/Lord_Howe', 'Asia/Kolkata'];
const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
const AGENTS = 5;
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/** mulberry32, as in agreement.test.ts. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const hhmm = (minutes: number) => (minutes === 1440 ? '24:00' : `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`);

/** Up to `max` ordered, apart intervals of a day on the quarter hours, now and then the whole day. */
function dayIntervals(next: () => number, max: number): { start: string; end: string }[] {
  if (next() < 0.15) return [{ start: '00:00', end: '24:00' }];
  const marks = [...new Set(Array.from({ length: 2 * (1 + Math.floor(next() * max)) }, () => Math.floor(next() * 97) * 15))].sort((a, b) => a - b);
  const intervals: { start: string; end: string }[] = [];
  for (let i = 0; i + 1 < marks.length; i += 2) intervals.push({ start: hhmm(marks[i]!), end: hhmm(marks[i + 1]!) });
  return intervals;
}

describe('the working time common to several agents', () => {
  let t: TestApp;
  let agents: AgentWithToken[];

  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
    const root = await bootstrapAgent(t);
    agents = [];
    for (let i = 0; i < AGENTS; i++) agents.push(await createAgent(t, root));
  });
  afterAll(() => t.close());

  it(`is the intersection of each agent's working time (${RUNS} generated cases around daylight-saving changes)`, async () => {
    const next = random(SEED);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
    let sameZone = 0;
    let overridden = 0;
    let nonEmpty = 0;
    for (let run = 0; run < RUNS; run++) {
      // Two zones for the case, so that agents share one; a window of 2 to 9 days around one of the first's changes.
      const zones = [pick(ZONES), pick(ZONES)];
      const changes = zoneTransitions(zones[0]!, new Date('2031-02-01T00:00:00Z'), new Date('2033-12-01T00:00:00Z'));
      const around = changes.length ? pick(changes).at.getTime() : Date.parse('2032-06-15T00:00:00Z');
      const from = around - Math.floor(next() * 3 * DAY / MINUTE) * MINUTE;
      const to = from + DAY * 2 + Math.floor(next() * 7 * DAY / MINUTE) * MINUTE;
      const chosen = agents.slice(0, 2 + Math.floor(next() * (AGENTS - 1)));
      const caseZones: string[] = [];
      for (const agent of chosen) {
        const timeZone = pick(zones);
        caseZones.push(timeZone);
        const days = Array.from({ length: Math.ceil((to - from) / DAY) + 1 }, (_, d) => DateTime.fromMillis(from + d * DAY, { zone: timeZone }).toISODate()!);
        const dateOverrides = [...new Set(Array.from({ length: Math.floor(next() * 3) }, () => pick(days)))].map((date) => ({
          date,
          hours: next() < 0.3 ? [] : dayIntervals(next, 2),
        }));
        if (dateOverrides.length) overridden++;
        const rules = {
          timeZone,
          weeklyHours: next() < 0.2 ? null : WEEKDAYS.flatMap((day) => (next() < 0.15 ? [] : dayIntervals(next, 2)).map((interval) => ({ day, ...interval }))),
          dateOverrides,
        };
        const set = await t.rest({ method: 'PUT', url: '/api/agents/me/availability-rules', headers: bearer(agent.token), payload: rules });
        expect(set.statusCode).toBe(200);
      }
      if (new Set(caseZones).size < caseZones.length) sameZone++;

      const [row] = await t.query<{ common: string | null; each: string | null }>(
        `select (select w.ranges from common_working_ranges((select array_agg(r) from availability_rules r where r.agent_id = any($1::uuid[])),
                                                              $2::timestamptz, $3::timestamptz) as w)::text as common,
                (select range_intersect_agg(agent_working_ranges(r, $2::timestamptz, $3::timestamptz))
                   from availability_rules r where r.agent_id = any($1::uuid[]))::text as each`,
        [chosen.map((agent) => agent.id), new Date(from).toISOString(), new Date(to).toISOString()],
      );
      if (row!.common !== row!.each) {
        const rules = await t.query(`select r.*, (select json_agg(o) from availability_overrides o where o.agent_id = r.agent_id) as overrides
                                       from availability_rules r where r.agent_id = any($1::uuid[])`, [chosen.map((agent) => agent.id)]);
        console.log(`common working time disagreement (FUZZ_SEED=${SEED}, run ${run}): ${new Date(from).toISOString()} – ${new Date(to).toISOString()} ${JSON.stringify(rules)}`);
      }
      expect({ run, common: row!.common }).toEqual({ run, common: row!.each });
      if (row!.each !== '{}') nonEmpty++;
    }
    console.log(`common working time: ${RUNS} cases, ${sameZone} with agents sharing a zone, ${overridden} rules with overrides, ${nonEmpty} with common time`);
    // The shortcut's cases occur: agents sharing a zone, overrides, and common time that is not empty.
    expect(sameZone).toBeGreaterThan(RUNS / 2);
    expect(overridden).toBeGreaterThan(RUNS / 2);
    expect(nonEmpty).toBeGreaterThan(RUNS / 4);
  }, 300_000);
});
