/**
 * The hand-written reference server: the baseline every ratio of `npm run bench` is measured against.
 *
 * It serves seed 000's `POST /api/bookings`, `GET /api/bookings`, `DELETE /api/bookings/{id}` and
 * `PATCH /api/proposals/{id}/accept` with plain Fastify, one `pg` pool and named prepared statements, one
 * statement a round trip, and nothing else: no ORM, no events, no webhooks, no job queue. A write is
 * one transaction and so one commit (and, on durable storage, one WAL flush): the bench's W scenario
 * counts the gateway's against it.
 * `GET /api/availability` runs the gateway's own named statement (imported, so the two cannot drift)
 * with the same grid alignment, cursor and answers: the ratio measures everything around the SQL.
 * It must stay semantically equal to the gateway's REST layer (src/modules/scheduling/rest/booking.*,
 * booking.service.ts): the same credential lookup on every request (sha256 of the token, no cache),
 * the same 401/403/404/409/429 answers, the same transactions (agent row lock, cap count, insert of the
 * booking and its slot, the exclusion constraint deciding overlaps; cancel_booking's and
 * accept_proposal's locks and conditional updates) and the same list query.
 * If the gateway's semantics change, change this file with them, or the ratios stop meaning anything.
 *
 *   PORT=3001 HOST=127.0.0.1 DATABASE_URL=postgres://… node --import @swc-node/register/esm-register bench/reference/server.ts
 */
import { createHash, randomUUID } from 'node:crypto';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import Fastify, { type FastifyError, type FastifyRequest } from 'fastify';
import pg from 'pg';
import { AVAILABILITY } from '../../src/modules/availability/sql/availability.sql.js';

const CAP = Number(process.env.BOOKING_CAP ?? 500);
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
pool.on('error', () => undefined); // an idle connection that dies is replaced on the next checkout

/** Named statements: each connection parses and plans them once. */
const SQL = {
  auth: { name: 'ref_auth', text: 'select id from agents where token_hash = $1' },
  lock: { name: 'ref_lock', text: 'select 1 from agents where id = $1 for no key update' },
  live: {
    name: 'ref_live',
    text: `select count(*)::int as n from (select 1 from bookings where agent_id = $1 and status = 'confirmed' and live_until > $2 limit $3) s`,
  },
  insertBooking: {
    name: 'ref_insert_booking',
    text: `insert into bookings (id, agent_id, starts_at, ends_at, status, rrule, exdates, created_at, live_until)
           values ($1, $2, $3, $4, 'confirmed', null, '[]', $5, $4)`,
  },
  insertSlot: {
    name: 'ref_insert_slot',
    text: 'insert into booking_slots (booking_id, agent_id, starts_at, ends_at, blocked_from, blocked_until) values ($1, $2, $3, $4, $3, $4)',
  },
  cancel: {
    name: 'ref_cancel',
    text: `update bookings set status = 'cancelled', cancelled_at = $3 where id = $1 and agent_id = $2 and status = 'confirmed' returning id`,
  },
  freeSlots: { name: 'ref_free_slots', text: 'delete from booking_slots where booking_id = $1' },
  owner: { name: 'ref_owner', text: 'select agent_id from bookings where id = $1' },
  proposal: { name: 'ref_proposal', text: 'select proposer_agent_id, target_agent_id, starts_at, ends_at from proposals where id = $1' },
  lockTwo: { name: 'ref_lock_two', text: 'select 1 from agents where id = any($1::uuid[]) order by id for no key update' },
  decide: {
    name: 'ref_decide',
    text: `update proposals set status = 'accepted', decided_at = $2 where id = $1 and status = 'pending' returning id`,
  },
  proposalStatus: { name: 'ref_proposal_status', text: 'select status from proposals where id = $1' },
  sourceSlot: {
    name: 'ref_source_slot',
    text: `select b.id, b.rrule from booking_slots s join bookings b on b.id = s.booking_id
            where s.agent_id = $1 and tstzrange(s.blocked_from, s.blocked_until, '[)') && tstzrange($2, $3, '[)')
              and s.starts_at = $2 and s.ends_at = $3 and b.status = 'confirmed' limit 1`,
  },
  transferBooking: { name: 'ref_transfer_booking', text: 'update bookings set agent_id = $2 where id = $1' },
  transferSlots: { name: 'ref_transfer_slots', text: 'update booking_slots set agent_id = $2 where booking_id = $1' },
  excludeOccurrence: { name: 'ref_exclude_occurrence', text: 'select 1 from booking_exclude_occurrences($1, array[$2::timestamptz])' },
  linkBooking: {
    name: 'ref_link_booking',
    text: `update proposals set booking_id = $2 where id = $1
           returning id, proposer_agent_id as "proposerAgentId", target_agent_id as "targetAgentId", starts_at as "startsAt",
                     ends_at as "endsAt", status, created_at as "createdAt"`,
  },
  list: {
    name: 'ref_list',
    text: `select id, agent_id as "agentId", starts_at as "startsAt", ends_at as "endsAt", status, rrule,
                  warning_sent_at as "warningSentAt", created_at as "createdAt"
             from bookings where agent_id = $1 and starts_at < $2 and ends_at > $3
            order by starts_at, id limit $4`,
  },
} as const;

class HttpError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly field?: string) {
    super(message);
  }
}

/** `Authorization: Bearer <token>` or `X-API-Key: <token>` (not both) → the agent's id, looked up every time. */
async function authenticate(request: FastifyRequest): Promise<string> {
  const { authorization, 'x-api-key': apiKey } = request.headers;
  if (authorization === undefined && apiKey === undefined) throw new HttpError(401, 'unauthorized', 'missing credential');
  const token = authorization !== undefined && apiKey === undefined
    ? /^Bearer[ ]+(\S+)\s*$/i.exec(authorization)?.[1]
    : authorization === undefined && typeof apiKey === 'string' ? apiKey.trim() : undefined;
  if (!token) throw new HttpError(401, 'unauthorized', 'unparseable credential');
  const { rows } = await pool.query<{ id: string }>({ ...SQL.auth, values: [createHash('sha256').update(token).digest('hex')] });
  if (!rows[0]) throw new HttpError(401, 'unauthorized', 'invalid credential');
  return rows[0].id;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const badRequest = (field: string, message: string) => new HttpError(400, 'validation', message, field);

const dateTime = { type: 'string', format: 'date-time' } as const;
const bookingItem = {
  type: 'object',
  properties: {
    id: { type: 'string' }, agentId: { type: 'string' }, startsAt: dateTime, endsAt: dateTime, status: { type: 'string' },
    rrule: { type: ['string', 'null'] }, warningSentAt: { type: ['string', 'null'], format: 'date-time' }, createdAt: dateTime,
  },
} as const;

const proposalItem = {
  type: 'object',
  properties: {
    id: { type: 'string' }, proposerAgentId: { type: 'string' }, targetAgentId: { type: 'string' }, startsAt: dateTime, endsAt: dateTime,
    status: { type: 'string' }, createdAt: dateTime,
  },
} as const;

/** `work` in one transaction on one connection; an overlap of the agent's slots is 409 slot_taken. */
async function transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    const pgError = error as { code?: string; constraint?: string };
    if (pgError.code === '23P01' && pgError.constraint === 'booking_slots_no_overlap') {
      throw new HttpError(409, 'slot_taken', 'the time range overlaps another booking of this agent');
    }
    throw error;
  } finally {
    client.release();
  }
}

const app = Fastify({ logger: false });
// Validation as in the gateway: unknown properties are errors (never stripped), bodies are not coerced.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;
const ajv = (coerceTypes: boolean) => addFormats(new Ajv({ allErrors: true, strict: false, useDefaults: true, removeAdditional: false, coerceTypes }));
const [bodyAjv, urlAjv] = [ajv(false), ajv(true)];
app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : urlAjv).compile(schema));

app.setErrorHandler((error: FastifyError | HttpError, _request, reply) => {
  if (!(error instanceof HttpError) && error.validation) {
    const errors: Record<string, string> = {};
    for (const { instancePath, params, message } of error.validation) {
      const named = params.missingProperty ?? params.additionalProperty;
      const field = [...instancePath.split('/').filter(Boolean), ...(named === undefined ? [] : [String(named)])].join('.');
      errors[field || (error.validationContext ?? 'body')] ??= message ?? 'is invalid';
    }
    return reply.code(400).send({ errors });
  }
  if (error instanceof HttpError) {
    return error.code === 'validation'
      ? reply.code(400).send({ errors: { [error.field ?? 'body']: error.message } })
      : reply.code(error.status).send({ error: error.code, message: error.message });
  }
  if (error.statusCode && error.statusCode < 500) return reply.code(error.statusCode).send({ error: 'bad_request', message: error.message });
  return reply.code(500).send({ error: 'Internal Server Error' });
});

app.get('/readyz', async () => {
  await pool.query('select 1');
  return { status: 'ok' };
});

app.post<{ Body: { agentId: string; startsAt: string; endsAt: string } }>('/api/bookings', {
  schema: {
    body: {
      type: 'object', additionalProperties: false, required: ['agentId', 'startsAt', 'endsAt'],
      properties: { agentId: { type: 'string', minLength: 1, maxLength: 128 }, startsAt: dateTime, endsAt: dateTime },
    },
    response: { 201: bookingItem },
  },
}, async (request, reply) => {
  const actor = await authenticate(request);
  const startsAt = new Date(request.body.startsAt);
  const endsAt = new Date(request.body.endsAt);
  if (Number.isNaN(startsAt.getTime())) throw badRequest('startsAt', 'must be an RFC 3339 date-time with a time-zone offset');
  if (Number.isNaN(endsAt.getTime())) throw badRequest('endsAt', 'must be an RFC 3339 date-time with a time-zone offset');
  if (endsAt <= startsAt) throw badRequest('endsAt', 'must be after startsAt');
  if (request.body.agentId !== actor) throw new HttpError(403, 'forbidden', 'agentId must be the agent of the credential');

  const id = randomUUID();
  const now = new Date();
  await transaction(async (client) => {
    await client.query({ ...SQL.lock, values: [actor] });
    const { rows } = await client.query<{ n: number }>({ ...SQL.live, values: [actor, now, CAP] });
    if (rows[0]!.n >= CAP) throw new HttpError(429, 'booking_cap_reached', `the free tier allows ${CAP} confirmed bookings that have not ended`);
    await client.query({ ...SQL.insertBooking, values: [id, actor, startsAt, endsAt, now] });
    await client.query({ ...SQL.insertSlot, values: [id, actor, startsAt, endsAt] });
  });
  return reply.code(201).send({ id, agentId: actor, startsAt, endsAt, status: 'confirmed', rrule: null, warningSentAt: null, createdAt: now });
});

// Soft-cancel, as cancel_booking: under the owner's row lock, the booking's slots freed; cancelling twice is fine.
app.delete<{ Params: { id: string } }>('/api/bookings/:id', async (request, reply) => {
  const actor = await authenticate(request);
  const { id } = request.params;
  if (!UUID.test(id)) throw new HttpError(404, 'not_found', `no booking ${id}`);
  await transaction(async (client) => {
    await client.query({ ...SQL.lock, values: [actor] });
    const cancelled = await client.query({ ...SQL.cancel, values: [id, actor, new Date()] });
    if (cancelled.rowCount) {
      await client.query({ ...SQL.freeSlots, values: [id] });
      return;
    }
    const { rows } = await client.query<{ agent_id: string }>({ ...SQL.owner, values: [id] });
    if (!rows[0]) throw new HttpError(404, 'not_found', `no booking ${id}`);
    if (rows[0].agent_id !== actor) throw new HttpError(403, 'forbidden', 'the booking belongs to another agent');
  });
  return reply.code(204).send();
});

// Accept, as accept_proposal: both agents locked in id order, the conditional status update, then the
// target's slot of exactly the proposal's range moves to the proposer (a single booking whole; an
// occurrence of a series leaves it through the gateway's writer function, as in accept_proposal),
// or a new booking is written for the proposer. An overlap on the proposer's calendar is 409 slot_taken.
app.patch<{ Params: { id: string } }>('/api/proposals/:id/accept', {
  schema: { response: { 200: proposalItem } },
}, async (request) => {
  const actor = await authenticate(request);
  const { id } = request.params;
  if (!UUID.test(id)) throw new HttpError(404, 'not_found', `no proposal ${id}`);
  const now = new Date();
  return transaction(async (client) => {
    const found = await client.query<{ proposer_agent_id: string; target_agent_id: string; starts_at: Date; ends_at: Date }>({ ...SQL.proposal, values: [id] });
    const proposal = found.rows[0];
    if (!proposal) throw new HttpError(404, 'not_found', `no proposal ${id}`);
    if (proposal.target_agent_id !== actor) throw new HttpError(403, 'forbidden', 'only the target agent may accept');
    await client.query({ ...SQL.lockTwo, values: [[proposal.proposer_agent_id, proposal.target_agent_id]] });
    const decided = await client.query({ ...SQL.decide, values: [id, now] });
    if (!decided.rowCount) {
      const { rows } = await client.query<{ status: string }>({ ...SQL.proposalStatus, values: [id] });
      throw new HttpError(409, 'proposal_not_pending', `the proposal is already ${rows[0]?.status}`);
    }
    const { starts_at: startsAt, ends_at: endsAt } = proposal;
    const source = (await client.query<{ id: string; rrule: string | null }>({ ...SQL.sourceSlot, values: [actor, startsAt, endsAt] })).rows[0];
    let bookingId: string;
    if (source && source.rrule === null) {
      bookingId = source.id;
      await client.query({ ...SQL.transferBooking, values: [bookingId, proposal.proposer_agent_id] });
      await client.query({ ...SQL.transferSlots, values: [bookingId, proposal.proposer_agent_id] });
    } else {
      if (source) await client.query({ ...SQL.excludeOccurrence, values: [source.id, startsAt] });
      bookingId = randomUUID();
      await client.query({ ...SQL.insertBooking, values: [bookingId, proposal.proposer_agent_id, startsAt, endsAt, now] });
      await client.query({ ...SQL.insertSlot, values: [bookingId, proposal.proposer_agent_id, startsAt, endsAt] });
    }
    return (await client.query({ ...SQL.linkBooking, values: [id, bookingId] })).rows[0];
  });
});

app.get<{ Querystring: { limit: number; from?: string; to?: string } }>('/api/bookings', {
  schema: {
    querystring: {
      type: 'object',
      properties: { limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 }, from: dateTime, to: dateTime },
    },
    response: { 200: { type: 'object', properties: { items: { type: 'array', items: bookingItem } } } },
  },
}, async (request) => {
  const actor = await authenticate(request);
  const from = request.query.from === undefined ? null : new Date(request.query.from);
  const to = request.query.to === undefined ? null : new Date(request.query.to);
  if (from && Number.isNaN(from.getTime())) throw badRequest('from', 'must be a valid date-time');
  if (to && Number.isNaN(to.getTime())) throw badRequest('to', 'must be a valid date-time');
  if (from && to && to < from) throw badRequest('to', 'must be at or after from');
  if (from && to && from.getTime() === to.getTime()) return { items: [] };
  // An open end is ±infinity, so one statement serves every window.
  const { rows } = await pool.query({ ...SQL.list, values: [actor, to ?? 'infinity', from ?? '-infinity', request.query.limit] });
  return { items: rows };
});

// ---- GET /api/availability: the same statement as the gateway's, the same limits and answers.
const AVAILABILITY_LIMITS = { maxOtherAgents: 20, maxWindowDays: 31, maxBookedSlots: 50_000 } as const;
const encodeCursor = (start: Date) => Buffer.from(`slot:${start.toISOString()}`).toString('base64url');
function decodeCursor(cursor: string): Date {
  const text = Buffer.from(cursor, 'base64url').toString();
  const at = text.startsWith('slot:') ? new Date(text.slice(5)) : new Date(Number.NaN);
  if (Number.isNaN(at.getTime())) throw badRequest('after', 'is not a cursor from this list');
  return at;
}
const refused = (count: number) =>
  new HttpError(403, 'forbidden', `not allowed to see the free/busy of ${count === 1 ? 'an agent' : `${count} of the agents`} asked for: not shared with you, or no such agent`);

app.get<{ Querystring: { agents?: string; duration: number; from: string; to: string; granularity: number; limit: number; after?: string } }>('/api/availability', {
  schema: {
    querystring: {
      type: 'object', additionalProperties: false, required: ['duration', 'from', 'to'],
      properties: {
        agents: { type: 'string', maxLength: 2600 }, duration: { type: 'integer', minimum: 5, maximum: 1440 }, from: dateTime, to: dateTime,
        granularity: { type: 'integer', minimum: 5, maximum: 1440, default: 15 }, limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
        after: { type: 'string', minLength: 1, maxLength: 100 },
      },
    },
    response: {
      200: {
        type: 'object',
        properties: {
          items: { type: 'array', items: { type: 'object', properties: { startsAt: dateTime, endsAt: dateTime } } },
          nextCursor: { type: ['string', 'null'] },
        },
      },
    },
  },
}, async (request) => {
  const actor = await authenticate(request);
  const { agents, duration, granularity, limit, after } = request.query;
  const ids = (agents ?? '').split(',').map((id) => id.trim()).filter(Boolean);
  if (ids.length > AVAILABILITY_LIMITS.maxOtherAgents) throw badRequest('agents', `must name at most ${AVAILABILITY_LIMITS.maxOtherAgents} agents besides the caller`);
  const from = new Date(request.query.from);
  const to = new Date(request.query.to);
  if (Number.isNaN(from.getTime())) throw badRequest('from', 'must be an RFC 3339 date-time with a time-zone offset');
  if (Number.isNaN(to.getTime())) throw badRequest('to', 'must be an RFC 3339 date-time with a time-zone offset');
  if (to <= from) throw badRequest('to', 'must be after from');
  if (to.getTime() - from.getTime() > AVAILABILITY_LIMITS.maxWindowDays * 86_400_000) throw badRequest('to', `must be at most ${AVAILABILITY_LIMITS.maxWindowDays} days after from`);
  const others = [...new Set(ids.map((id) => id.toLowerCase()))].filter((id) => id !== actor);
  const malformed = others.filter((id) => !UUID.test(id)).length;
  if (malformed) throw refused(malformed);
  const step = granularity * 60_000;
  const earliest = Math.max(from.getTime(), after === undefined ? Number.NEGATIVE_INFINITY : decodeCursor(after).getTime() + 1);
  const gridStart = new Date(Math.ceil(earliest / step) * step);
  const { rows } = await pool.query<{ refused: string[] | null; crowded: boolean | null; starts: Date[] | null }>({
    name: AVAILABILITY.name,
    text: AVAILABILITY.text,
    values: [actor, others, gridStart, new Date(Math.max(to.getTime(), gridStart.getTime())), duration, granularity, limit + 1, AVAILABILITY_LIMITS.maxBookedSlots, new Date()],
  });
  const row = rows[0]!;
  if (row.refused) throw refused(row.refused.length);
  if (row.crowded) throw badRequest('to', `the agents asked hold more than ${AVAILABILITY_LIMITS.maxBookedSlots} booked slots inside the window: ask for a shorter one`);
  const starts = row.starts ?? [];
  const items = starts.slice(0, limit).map((start) => ({ startsAt: start, endsAt: new Date(start.getTime() + duration * 60_000) }));
  return { items, nextCursor: starts.length > limit ? encodeCursor(items.at(-1)!.startsAt) : null };
});

await app.listen({ port: Number(process.env.PORT ?? 3001), host: process.env.HOST ?? '127.0.0.1' });
const stop = () => void app.close().then(() => pool.end()).then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
