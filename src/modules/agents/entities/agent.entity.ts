import { randomUUID } from 'node:crypto';
import { Check, Entity, Index, ManyToOne, PrimaryKey, Property, Unique } from '@mikro-orm/decorators/legacy';
import { SCHEDULING_LIMITS } from '../../../platform/api-limits.js';

/** The values of `free_busy_visibility` (a check constraint holds them). */
export const FREE_BUSY_VISIBILITIES = ['family', 'anyone', 'nobody'] as const;
/** Who may ask for an agent's free/busy: `family` (itself, its parent, its children), `anyone`, `nobody` (itself only). */
export type FreeBusyVisibility = (typeof FREE_BUSY_VISIBILITIES)[number];

/** An agent seat: owns a calendar and one credential (stored only as its SHA-256 hash). */
@Entity({ tableName: 'agents' })
@Check({ name: 'agents_name_check', expression: 'char_length((name)::text) >= 1' })
@Check({
  name: 'agents_free_busy_visibility_check',
  expression: `"free_busy_visibility" in (${FREE_BUSY_VISIBILITIES.map((value) => `'${value}'`).join(', ')})`,
})
// The bootstrap agent is the only parentless row; this index admits exactly one (see the migration).
@Unique({
  name: 'agents_single_root',
  expression: 'create unique index agents_single_root on agents ((parent_id is null)) where parent_id is null',
})
// A changed or removed agent tells every process to forget its credential: a trigger (sql/agent-credential-changed.trigger.ts).
// A family is a root agent and all its descendants: each agent's root is set from its parent, and
// the family's member count (agent_families) is held under AGENT_FAMILY_MAX (sql/agent-family-*.trigger.ts).
@Check({ name: 'agents_root_id_check', expression: 'root_id is not null' })
export class Agent {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'string', length: 120 })
  name!: string;

  @Property({ type: 'json', columnType: 'jsonb' })
  metadata: Record<string, unknown> = {};

  @Property({ type: 'json', columnType: 'jsonb' })
  config: Record<string, unknown> = {};

  @Property({ type: 'string', length: 64, unique: 'agents_token_hash_key', hidden: true })
  tokenHash!: string;

  @Property({ type: 'string', length: SCHEDULING_LIMITS.idempotencyKeyMaxLength, nullable: true, unique: 'agents_idempotency_key_key' })
  idempotencyKey: string | null = null;

  /** The agent that created this one; null only for the bootstrap agent. */
  @ManyToOne(() => Agent, { nullable: true, deleteRule: 'restrict' })
  @Index({ name: 'agents_parent_id_idx' })
  parent: Agent | null = null;

  /**
   * The root of this agent's family (itself for a root). Written by the database from the parent,
   * never by the application; never null (the check), optional only to the ORM.
   */
  @ManyToOne(() => Agent, { nullable: true, deleteRule: 'restrict', fieldName: 'root_id' })
  root?: Agent | null;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  createdAt: Date = new Date();

  /** Who may ask for this agent's free/busy; the agent sets it (`setFreeBusyVisibility`). */
  @Property({ type: 'string', length: 16, default: 'family' })
  freeBusyVisibility: FreeBusyVisibility = 'family';
}
