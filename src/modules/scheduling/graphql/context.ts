import type { PlatformContext } from '../../../platform/graphql/server.js';
import type { BookingEventView } from '../booking-events.js';
import type { Agent } from '../entities/agent.entity.js';
import type { SchedulingLoaders } from './loaders.js';

export interface SchedulingContext extends PlatformContext {
  readonly scheduling: SchedulingLoaders & {
    /** The agent of the request's credential, or null; looked up once per operation. */
    caller(): Promise<Agent | null>;
    /** Authenticates, then streams the caller's booking events (replay after `after`, then live). */
    bookingEvents(after: string | undefined): Promise<AsyncGenerator<BookingEventView>>;
  };
}
