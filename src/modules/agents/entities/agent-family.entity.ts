import { Check, Entity, OneToOne, Property } from '@mikro-orm/decorators/legacy';
import { Agent } from './agent.entity.js';

/**
 * How many agents a family holds (a root agent and all its descendants). Kept by the agents' insert
 * trigger in the transaction of each insert; the application only reads it.
 */
@Entity({ tableName: 'agent_families' })
@Check({ name: 'agent_families_members_check', expression: 'members >= 1' })
export class AgentFamily {
  @OneToOne(() => Agent, { primary: true, fieldName: 'root_id', deleteRule: 'cascade' })
  root!: Agent;

  @Property({ type: 'integer' })
  members!: number;
}
