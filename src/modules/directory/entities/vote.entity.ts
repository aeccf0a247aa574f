import { Entity, Index, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { Tool } from './tool.entity.js';
import { User } from './user.entity.js';

/** One user's vote on one tool; sent with X-Agent-Id it counts as an agent vote. */
@Entity({ tableName: 'votes' })
@Index({ name: 'votes_user_idx', properties: ['user'] })
// vote_count and the per-day counters follow the rows: a trigger (sql/votes-maintain-counts.trigger.ts).
export class Vote {
  @ManyToOne(() => Tool, { primary: true, deleteRule: 'cascade' })
  tool!: Tool;

  @ManyToOne(() => User, { primary: true, deleteRule: 'cascade' })
  user!: User;

  @Property({ type: 'string', length: 128, nullable: true })
  agentId: string | null = null;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  createdAt: Date = new Date();
}
