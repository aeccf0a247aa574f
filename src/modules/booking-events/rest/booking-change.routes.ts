import type { FastifyInstance } from 'fastify';
import type { BookingChangeFeed } from '../change-feed.service.js';
import { bookingChangesRoute } from './booking-change.schemas.js';

export function registerBookingChangeRoutes(app: FastifyInstance, feed: BookingChangeFeed): void {
  // A static segment: find-my-way matches it before `/api/bookings/:id`, whatever the order of registration.
  app.get<{ Querystring: { since?: string; limit: number; agentId?: string; family: boolean } }>(
    '/api/bookings/changes',
    { schema: bookingChangesRoute },
    async (request) => {
      const { since, limit, agentId, family } = request.query;
      return feed.changes(await request.actor(), { since, limit, agentId, family });
    },
  );
}
