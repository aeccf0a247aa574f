import { randomUUID } from 'node:crypto';
import { Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Agent } from '../../agents/index.js';

/** A read-only token for an agent's iCalendar feed (stored only as its SHA-256 hash). */
@Entity({ tableName: 'calendar_feeds' })
@Index({ name: 'calendar_feeds_agent_idx', properties: ['agent'] })
// At most MAX_CALENDAR_FEEDS_PER_AGENT per agent: a trigger holds it (sql/calendar-feeds-per-agent-limit.trigger.ts).
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
