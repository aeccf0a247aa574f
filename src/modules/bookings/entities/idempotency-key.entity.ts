import { Entity, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Agent } from '../../agents/index.js';
import { SCHEDULING_LIMITS } from '../../../platform/api-limits.js';

/**
 * The first outcome of a request sent with an `Idempotency-Key`, per agent and operation, so a
 * repeat with the same body replays it and a repeat with another body is a conflict.
 */
@Entity({ tableName: 'idempotency_keys' })
export class IdempotencyKey {
  @ManyToOne(() => Agent, { primary: true, deleteRule: 'cascade' })
  agent!: Agent;

  @PrimaryKey({ type: 'string', length: 32 })
  operation!: string;

  @PrimaryKey({ type: 'string', length: SCHEDULING_LIMITS.idempotencyKeyMaxLength })
  key!: string;

  /** SHA-256 of the canonical request body. */
  @Property({ type: 'string', length: 64 })
  requestHash!: string;

  @Property({ type: 'json', columnType: 'jsonb' })
  outcome!: unknown;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  createdAt: Date = new Date();
}
