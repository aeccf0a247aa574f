import type { PlatformContext } from '../../../platform/graphql/server.js';
import type { BookingEventView } from '../booking-events.js';
import type { SchedulingLoaders } from './loaders.js';

export interface SchedulingContext extends PlatformContext {
  readonly scheduling: SchedulingLoaders & {
    /** The caller's booking events (replay after `after`, then live); only an agent has them. */
    bookingEvents(after: string | undefined): Promise<AsyncGenerator<BookingEventView>>;
  };
}
