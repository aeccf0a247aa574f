import type { FastifyInstance } from 'fastify';
import { setNextPageLink } from '../../../platform/http/next-page-link.js';
import type { BookingService } from '../booking.service.js';
import { decodeBookingCursor, decodeOccurrenceCursor } from '../list-cursors.js';
import { cancelBookingRoute, createBookingRoute, listBookingsRoute, occurrencesRoute } from './booking.schemas.js';

const optionalDate = (value: string | undefined) => (value === undefined ? undefined : new Date(value));

export function registerBookingRoutes(app: FastifyInstance, bookings: BookingService): void {
  app.post<{ Body: { agentId: string; startsAt: string; endsAt: string }; Headers: { 'idempotency-key'?: string } }>(
    '/api/bookings',
    { schema: createBookingRoute },
    async (request, reply) => {
      const actor = await request.actor();
      const { agentId, startsAt, endsAt } = request.body;
      const booking = await bookings.create(
        actor,
        { agentId, startsAt: new Date(startsAt), endsAt: new Date(endsAt) },
        request.headers['idempotency-key'],
      );
      return reply.code(201).send(booking);
    },
  );

  app.get<{ Querystring: { limit: number; from?: string; to?: string; after?: string } }>(
    '/api/bookings',
    { schema: listBookingsRoute },
    async (request, reply) => {
      const actor = await request.actor();
      const { limit, from, to, after } = request.query;
      const page = await bookings.list(actor, { from: optionalDate(from), to: optionalDate(to) }, limit, after === undefined ? undefined : decodeBookingCursor(after));
      setNextPageLink(request, reply, page.nextCursor);
      return { items: page.items };
    },
  );

  app.delete<{ Params: { id: string } }>('/api/bookings/:id', { schema: cancelBookingRoute }, async (request, reply) => {
    const actor = await request.actor();
    await bookings.cancel(actor, request.params.id);
    return reply.code(204).send();
  });

  app.get<{ Params: { id: string }; Querystring: { limit: number; after?: string } }>(
    '/api/bookings/:id/occurrences',
    { schema: occurrencesRoute },
    async (request, reply) => {
      const actor = await request.actor();
      const { limit, after } = request.query;
      const page = await bookings.occurrences(actor, request.params.id, limit, after === undefined ? undefined : decodeOccurrenceCursor(after));
      setNextPageLink(request, reply, page.nextCursor);
      return { items: page.items };
    },
  );
}
