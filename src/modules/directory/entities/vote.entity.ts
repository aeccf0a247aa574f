import { Entity, Index, ManyToOne, Property, Trigger } from '@mikro-orm/decorators/legacy';
import { Tool } from './tool.entity.js';
import { User } from './user.entity.js';

/** One user's vote on one tool; sent with X-Agent-Id it counts as an agent vote. */
@Entity({ tableName: 'votes' })
@Index({ name: 'votes_user_idx', properties: ['user'] })
// vote_count equals the vote rows, and trending's per-day counters follow, in the voting transaction.
// The same statements are in the directory migration; keep the two identical.
@Trigger({
  name: 'votes_maintain_counts',
  timing: 'after',
  events: ['insert', 'delete'],
  forEach: 'row',
  body: `
  if tg_op = 'INSERT' then
    update tools set vote_count = vote_count + 1 where id = new.tool_id;
    insert into tool_vote_days (tool_id, day, votes) values (new.tool_id, (new.created_at at time zone 'UTC')::date, 1)
      on conflict (tool_id, day) do update set votes = tool_vote_days.votes + 1;
    return new;
  end if;
  update tools set vote_count = vote_count - 1 where id = old.tool_id;
  update tool_vote_days set votes = votes - 1 where tool_id = old.tool_id and day = (old.created_at at time zone 'UTC')::date;
  return old;
`,
})
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
