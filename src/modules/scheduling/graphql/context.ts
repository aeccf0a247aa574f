import type { PlatformContext } from '../../../platform/graphql/server.js';
import type { BookingEventView } from '../booking-events.js';
import type { SchedulingLoaders } from './loaders.js';

export interface SchedulingContext extends PlatformContext {
  readonly scheduling: SchedulingLoaders & {
    /** The caller's booking events (replay after `after`, then live); authenticates on first read. */
    bookingEvents(after: string | undefined): AsyncGenerator<BookingEventView>;
  };
}
