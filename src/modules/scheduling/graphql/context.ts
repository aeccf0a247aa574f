import type { PlatformContext } from '../../../platform/graphql/server.js';
import type { BookingEventView } from '../booking-events.js';
import type { AgentRecord } from '../sql/agent.sql.js';
import type { SchedulingLoaders } from './loaders.js';

export interface SchedulingContext extends PlatformContext {
  readonly scheduling: SchedulingLoaders & {
    /** The agent of the request's credential (401 `unauthorized` without one); resolved once per operation. */
    actor(): Promise<AgentRecord>;
    /** The same agent, or null for a caller without a valid credential. */
    caller(): Promise<AgentRecord | null>;
    /** Authenticates, then streams the caller's booking events (replay after `after`, then live). */
    bookingEvents(after: string | undefined): Promise<AsyncGenerator<BookingEventView>>;
  };
}
