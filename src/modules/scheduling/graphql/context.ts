import type { PlatformContext } from '../../../platform/graphql/server.js';
import type { BookingEventView } from '../booking-events.js';
import type { SchedulingLoaders } from './loaders.js';

export interface SchedulingContext extends PlatformContext {
  readonly scheduling: SchedulingLoaders & {
    /** Authenticates, then streams the caller's booking events (replay after `after`, then live). */
    bookingEvents(after: string | undefined): Promise<AsyncGenerator<BookingEventView>>;
  };
}
