import { EventEmitter, on } from 'node:events';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Notifications } from '../../platform/db/notifications.js';
import { fromBookingItem, toBookingItem, type BookingItem } from './booking-item.js';
import type { BookingView } from './booking.service.js';
import { BookingEvent, type BookingEventType } from './entities/booking-event.entity.js';

/** A booking event as subscribers and webhooks see it. `cursor` orders all events of an installation. */
export interface BookingEventView {
  cursor: string;
  agentId: string;
  type: BookingEventType;
  createdAt: Date;
  booking: BookingView;
}

/**
 * Writes an event in the caller's transaction: the log row (the outbox), a webhook delivery and its
 * job per matching endpoint, and the NOTIFY that fans it out to subscribers on every process.
 */
export async function recordBookingEvent(
  tx: EntityManager,
  event: { agentId: string; type: BookingEventType; booking: BookingView; at: Date },
): Promise<string> {
  const [row] = await tx.execute<{ id: string }[]>('select record_booking_event(?, ?, ?::jsonb, ?) as id', [
    event.agentId,
    event.type,
    JSON.stringify(toBookingItem(event.booking)),
    event.at,
  ]);
  return String(row?.id);
}

export const BOOKING_EVENTS_CHANNEL = 'booking_events';

/** Tells a live subscription to read the log again from its cursor (after a lost connection). */
const RESYNC = Symbol('resync');

interface NotifiedEvent {
  cursor: string;
  agentId: string;
  type: BookingEventType;
  createdAt: string;
  booking: BookingItem;
}

function fromNotification(payload: NotifiedEvent): BookingEventView {
  return { cursor: payload.cursor, agentId: payload.agentId, type: payload.type, createdAt: new Date(payload.createdAt), booking: fromBookingItem(payload.booking) };
}

/**
 * The live side of `bookingEvents`: the process's one LISTEN connection receives every committed
 * event (whichever process wrote it) and this bus hands it to the process's subscribers of the agent.
 */
export class BookingEventBus {
  private readonly emitter = new EventEmitter();

  constructor(notifications: Notifications) {
    this.emitter.setMaxListeners(0);
    notifications.on(BOOKING_EVENTS_CHANNEL, (payload) => {
      const event = fromNotification(JSON.parse(payload) as NotifiedEvent);
      this.emitter.emit(event.agentId, event);
    });
    // Events committed while the connection was down were never announced: every live subscription
    // goes back to the log from its last cursor.
    notifications.onReconnect(() => {
      for (const agentId of this.emitter.eventNames()) {
        if (agentId !== 'close' && agentId !== 'error') this.emitter.emit(agentId, RESYNC);
      }
    });
  }

  /** Ends every live subscription (shutdown). */
  close(): void {
    this.emitter.emit('close');
  }

  /**
   * Events of one agent, from `after` (exclusive) if given: first what is already in the log, then
   * live, with no gap and no duplicate. Listening starts before the log is read; anything seen in
   * both is dropped by cursor (cursors commit in order, see `record_booking_event`).
   */
  async *subscribe(em: EntityManager, agentId: string, after: string | undefined): AsyncGenerator<BookingEventView> {
    const live = on(this.emitter, agentId, { close: ['close'] }) as AsyncIterableIterator<[BookingEventView | typeof RESYNC]>;
    // Without `after`, the stream starts now: a resync must not replay older history.
    let last = after === undefined ? await this.latestCursor(em, agentId) : BigInt(after);
    const readLog = async function* (this: BookingEventBus) {
      for (;;) {
        const rows: BookingEvent[] = await em.find(BookingEvent, { agent: agentId, id: { $gt: String(last) } }, { orderBy: { id: 'asc' }, limit: 200 });
        for (const row of rows) {
          last = BigInt(row.id);
          yield { cursor: String(row.id), agentId, type: row.type, createdAt: row.createdAt, booking: fromBookingItem(row.booking as unknown as BookingItem) };
        }
        if (rows.length < 200) break;
        em.clear();
      }
    }.bind(this);
    try {
      if (after !== undefined) yield* readLog();
      for await (const [event] of live) {
        if (event === RESYNC) {
          yield* readLog();
          continue;
        }
        if (BigInt(event.cursor) <= last) continue;
        last = BigInt(event.cursor);
        yield event;
      }
    } finally {
      await live.return?.();
    }
  }

  private async latestCursor(em: EntityManager, agentId: string): Promise<bigint> {
    const [row] = await em.execute<{ id: string | null }[]>('select max(id) as id from booking_events where agent_id = ?', [agentId]);
    return BigInt(row?.id ?? 0);
  }
}
