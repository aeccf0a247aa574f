import type { FastifyInstance } from 'fastify';
import { AppError } from '../../../platform/errors.js';
import { AVAILABILITY_LIMITS as L, decodeSlotCursor, type AvailabilityService } from '../availability.service.js';
import { presentAvailabilityPage, presentSlotCheck } from '../availability.view.js';
import { availabilityRoute, slotCheckRoute } from './availability.schemas.js';

interface AvailabilityQuerystring {
  agents?: string;
  duration: number;
  from: string;
  to: string;
  granularity: number;
  limit: number;
  after?: string;
}

/** `agents=a,b`: ids separated by commas (spaces around them and empty entries ignored). */
function agentList(agents: string | undefined): string[] {
  const ids = (agents ?? '')
    .split(',')
    .map((id) => id.trim())
    .filter(Boolean);
  if (ids.length > L.maxOtherAgents) throw AppError.validation({ agents: `must name at most ${L.maxOtherAgents} agents besides the caller` });
  return ids;
}

export function registerAvailabilityRoutes(app: FastifyInstance, availability: AvailabilityService): void {
  app.get<{ Querystring: AvailabilityQuerystring }>('/api/availability', { schema: availabilityRoute }, async (request) => {
    const actor = await request.actor();
    const { agents, duration, from, to, granularity, limit, after } = request.query;
    const page = await availability.find(actor, {
      agentIds: agentList(agents),
      durationMinutes: duration,
      from: new Date(from),
      to: new Date(to),
      granularityMinutes: granularity,
      first: limit,
      after: after === undefined ? undefined : decodeSlotCursor(after),
    });
    return presentAvailabilityPage(page);
  });

  app.get<{ Querystring: { agent?: string; startsAt: string; endsAt: string } }>('/api/availability/check', { schema: slotCheckRoute }, async (request) => {
    const { agent, startsAt, endsAt } = request.query;
    return presentSlotCheck(await availability.checkSlot(await request.actor(), agent, new Date(startsAt), new Date(endsAt)));
  });
}
