import { AppError } from '../../platform/errors.js';
import type { PushingSource } from '../../platform/graphql/shared-execution.js';
import type { BookingEventView } from '../bookings/index.js';

/**
 * Live events a subscriber may leave unread while its consumer is not waiting (events pushed past
 * `next()` are bounded by the connection instead: see `pushWhileWaiting`). One that falls further
 * behind is ended with `subscriber_lagging` instead of growing without bound; it resumes from the
 * last cursor it saw, and the log replays the rest.
 */
export const MAX_UNREAD_EVENTS = 1_000;

/** The part of a subscription that runs before it goes live: reads what the log holds after its cursor. */
export type Replay = (setLast: (cursor: bigint) => void) => AsyncGenerator<BookingEventView, void, undefined>;

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/**
 * One subscriber's booking events: first the replay (the log after its cursor), then live events
 * as the bus offers them, each once and in cursor order (anything at or below the last cursor handed
 * out is dropped, so an event both replayed and offered live arrives once). Once its consumer waits
 * for a live event, events may be pushed past `next()` (see `pushWhileWaiting`); what arrives while
 * it does not wait (the replay, a send in progress) is queued for `next()` as before.
 *
 * Written as a plain iterator rather than an async generator over `events.on`: with 1,000
 * subscribers every event passes through here 1,000 times, and a live event for a waiting
 * subscriber settles its pending `next()` directly, without a queue or a generator step between.
 */
export class SubscriberStream implements AsyncGenerator<BookingEventView, undefined, undefined>, PushingSource<BookingEventView> {
  private readonly unread: { event: BookingEventView; cursor: bigint }[] = [];
  private head = 0;
  private waiting: { resolve: (result: IteratorResult<BookingEventView, undefined>) => void; reject: (error: unknown) => void } | undefined;
  private last = 0n;
  private replay: AsyncGenerator<BookingEventView, void, undefined> | undefined;
  private ended = false;
  private failure: unknown;
  private push: ((event: BookingEventView) => boolean) | undefined;

  constructor(
    replay: Replay,
    /** Called once, when the stream ends for any reason. */
    private readonly onEnd: () => void,
  ) {
    this.replay = replay((cursor) => (this.last = cursor));
  }

  pushWhileWaiting(push: (event: BookingEventView) => boolean): void {
    this.push = push;
  }

  /** A live event of this subscriber's agent. */
  offer(event: BookingEventView, cursor: bigint): void {
    if (this.ended) return;
    if (this.waiting && this.replay === undefined) {
      if (cursor <= this.last) return;
      this.last = cursor;
      if (this.push) {
        if (!this.push(event)) this.fail(new AppError('subscriber_lagging', 'the connection is not reading its messages; subscribe again with after: the last cursor you received'));
        return;
      }
      const { resolve } = this.waiting;
      this.waiting = undefined;
      resolve({ done: false, value: event });
      return;
    }
    if (this.unread.length - this.head >= MAX_UNREAD_EVENTS) {
      this.fail(new AppError('subscriber_lagging', `more than ${MAX_UNREAD_EVENTS} events were left unread; subscribe again with after: the last cursor you received`));
      return;
    }
    this.unread.push({ event, cursor });
  }

  /** Ends the stream (server shutdown): what is unread is still handed out, then it completes. */
  end(): void {
    this.finish();
    this.settleWaiting();
  }

  next(): Promise<IteratorResult<BookingEventView, undefined>> {
    if (this.replay) return this.nextReplayed(this.replay);
    while (this.head < this.unread.length) {
      const { event, cursor } = this.unread[this.head]!;
      this.unread[this.head++] = undefined!;
      if (this.head === this.unread.length) {
        this.unread.length = 0;
        this.head = 0;
      }
      if (cursor <= this.last) continue;
      this.last = cursor;
      return Promise.resolve({ done: false, value: event });
    }
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve(DONE);
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }));
  }

  async return(): Promise<IteratorResult<BookingEventView, undefined>> {
    this.failure = undefined;
    this.unread.length = 0;
    this.head = 0;
    this.finish();
    this.settleWaiting();
    await this.replay?.return();
    return DONE;
  }

  async throw(error: unknown): Promise<IteratorResult<BookingEventView, undefined>> {
    await this.return();
    throw error;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.return();
  }

  private async nextReplayed(replay: AsyncGenerator<BookingEventView, void, undefined>): Promise<IteratorResult<BookingEventView, undefined>> {
    let result: IteratorResult<BookingEventView, void>;
    try {
      result = await replay.next();
    } catch (error) {
      this.replay = undefined;
      this.finish();
      throw error;
    }
    if (!result.done) {
      this.last = BigInt(result.value.cursor);
      return result;
    }
    if (this.replay === replay) this.replay = undefined;
    return this.next();
  }

  private fail(error: AppError): void {
    this.failure = error;
    this.unread.length = 0;
    this.head = 0;
    this.finish();
    this.settleWaiting();
  }

  private settleWaiting(): void {
    const waiting = this.waiting;
    if (!waiting) return;
    this.waiting = undefined;
    if (this.failure !== undefined) waiting.reject(this.failure);
    else waiting.resolve(DONE);
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.onEnd();
  }
}
