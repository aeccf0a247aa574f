import type { FastifyInstance, FastifyReply } from 'fastify';
import { AppError } from '../../../platform/errors.js';
import { setNextPageLink } from '../../../platform/http/next-page-link.js';
import type { BookingService } from '../booking.service.js';
import type { BookingItem } from '../booking.shape.js';
import { decodeBookingCursor, decodeOccurrenceCursor } from '../list-cursors.js';
import type { RescheduleScope } from '../reschedule.js';
import {
  cancelBookingRoute,
  createBookingRoute,
  createGroupBookingRoute,
  getBookingRoute,
  listBookingsRoute,
  occurrencesRoute,
  rescheduleBookingRoute,
} from './booking.schemas.js';

const optionalDate = (value: string | undefined) => (value === undefined ? undefined : new Date(value));

/** A single booking answered with its version as a strong ETag (seed 000's body has no room for it). */
function sendBooking(reply: FastifyReply, booking: BookingItem, status = 200) {
  return reply.code(status).header('etag', `"${booking.version}"`).send(booking);
}

/** `If-Match: "3"` → 3; `*` or no header → no condition. Anything else is refused rather than ignored. */
function expectedVersionOf(ifMatch: string | undefined): number | undefined {
  if (ifMatch === undefined || ifMatch.trim() === '*') return undefined;
  const match = /^\s*"([1-9]\d{0,9})"\s*$/.exec(ifMatch);
  if (!match) throw AppError.validation({ 'if-match': 'must be one strong entity tag as this API sends it (ETag: "<version>"), or *' });
  return Number(match[1]);
}

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
      return sendBooking(reply, booking, 201);
    },
  );

  app.post<{ Body: { agentIds: string[]; startsAt: string; endsAt: string }; Headers: { 'idempotency-key'?: string } }>(
    '/api/bookings/group',
    { schema: createGroupBookingRoute },
    async (request, reply) => {
      const actor = await request.actor();
      const { agentIds, startsAt, endsAt } = request.body;
      const items = await bookings.createGroup(actor, { agentIds, startsAt: new Date(startsAt), endsAt: new Date(endsAt) }, request.headers['idempotency-key']);
      return reply.code(201).send({ items });
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

  app.get<{ Params: { id: string } }>('/api/bookings/:id', { schema: getBookingRoute }, async (request, reply) => {
    const actor = await request.actor();
    return sendBooking(reply, await bookings.get(actor, request.params.id));
  });

  app.patch<{
    Params: { id: string };
    Body: { startsAt: string; endsAt: string; scope?: RescheduleScope; occurrenceStartsAt?: string };
    Headers: { 'if-match'?: string };
  }>('/api/bookings/:id/reschedule', { schema: rescheduleBookingRoute }, async (request, reply) => {
    const actor = await request.actor();
    const { startsAt, endsAt, scope, occurrenceStartsAt } = request.body;
    const booking = await bookings.reschedule(actor, {
      bookingId: request.params.id,
      startsAt: new Date(startsAt),
      endsAt: new Date(endsAt),
      scope,
      occurrenceStartsAt: optionalDate(occurrenceStartsAt),
      expectedVersion: expectedVersionOf(request.headers['if-match']),
    });
    return sendBooking(reply, booking);
  });

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
