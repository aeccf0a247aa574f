import { randomUUID } from 'node:crypto';
import { Entity, Index, ManyToOne, PrimaryKey, Property, Trigger } from '@mikro-orm/decorators/legacy';
import { CALENDAR_FEEDS_PER_AGENT_LIMIT_BODY } from '../../../../migrations/Migration20261123070000_calendar_feeds.js';
import { Agent } from '../../agents/index.js';

export { MAX_CALENDAR_FEEDS_PER_AGENT } from '../../../../migrations/Migration20261123070000_calendar_feeds.js';

/** A read-only token for an agent's iCalendar feed (stored only as its SHA-256 hash). */
@Entity({ tableName: 'calendar_feeds' })
@Index({ name: 'calendar_feeds_agent_idx', properties: ['agent'] })
@Trigger({ name: 'calendar_feeds_per_agent_limit', timing: 'before', events: ['insert'], forEach: 'row', body: CALENDAR_FEEDS_PER_AGENT_LIMIT_BODY })
export class CalendarFeed {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Agent, { deleteRule: 'cascade' })
  agent!: Agent;

  @Property({ type: 'string', length: 64, unique: 'calendar_feeds_token_hash_key', hidden: true })
  tokenHash!: string;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  createdAt: Date = new Date();
}
