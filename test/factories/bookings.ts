import type { TestApp } from '../harness.js';
import type { AgentWithToken } from './agents.js';

export function postBooking(t: TestApp, agent: AgentWithToken, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return t.rest({
    method: 'POST',
    url: '/api/bookings',
    headers: { authorization: `Bearer ${agent.token}`, ...headers },
    payload: { agentId: agent.id, ...body },
  });
}

/** Creates a confirmed booking through REST and returns the BookingItem. */
export async function createBooking(t: TestApp, agent: AgentWithToken, startsAt: string, endsAt: string) {
  const response = await postBooking(t, agent, { startsAt, endsAt });
  if (response.statusCode !== 201) throw new Error(`create booking failed: ${response.statusCode} ${response.body}`);
  return response.json() as { id: string; startsAt: string; endsAt: string; status: string };
}

/** An hour-long slot `hours` after a base instant, as ISO strings. */
export function hourSlot(base: string, hours: number, lengthHours = 1) {
  const start = new Date(new Date(base).getTime() + hours * 3_600_000);
  return { startsAt: start.toISOString(), endsAt: new Date(start.getTime() + lengthHours * 3_600_000).toISOString() };
}
