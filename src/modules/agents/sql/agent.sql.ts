import { namedStatement } from '../../../platform/db/statements.js';
import type { Agent, FreeBusyVisibility } from '../entities/agent.entity.js';

/**
 * An agent as plain, immutable data: what a credential resolves to (cached per process, shared by
 * requests) and what loaders hand to resolvers. Entities stay inside units of work.
 */
export interface AgentRecord {
  readonly id: string;
  readonly name: string;
  readonly metadata: Record<string, unknown>;
  readonly config: Record<string, unknown>;
  readonly parentId: string | null;
  readonly createdAt: Date;
  readonly freeBusyVisibility: FreeBusyVisibility;
}

export interface AgentRow {
  id: string;
  name: string;
  metadata: Record<string, unknown>;
  config: Record<string, unknown>;
  parent_id: string | null;
  created_at: Date | string;
  free_busy_visibility: FreeBusyVisibility;
}

export function toAgentRecord(row: AgentRow): AgentRecord {
  return Object.freeze({
    id: row.id,
    name: row.name,
    metadata: row.metadata,
    config: row.config,
    parentId: row.parent_id,
    createdAt: new Date(row.created_at),
    freeBusyVisibility: row.free_busy_visibility,
  });
}

export function agentRecordOf(agent: Agent): AgentRecord {
  return toAgentRecord({
    id: agent.id,
    name: agent.name,
    metadata: agent.metadata,
    config: agent.config,
    parent_id: agent.parent?.id ?? null,
    created_at: agent.createdAt,
    free_busy_visibility: agent.freeBusyVisibility,
  });
}

const AGENT_COLUMNS = 'id, name, metadata, config, parent_id, created_at, free_busy_visibility';

/** Every authenticated request starts here (when the credential is not cached): one index probe. */
export const AGENT_BY_TOKEN_HASH = namedStatement<[tokenHash: string], AgentRow>(
  'agent_by_token_hash',
  `select ${AGENT_COLUMNS} from agents where token_hash = $1`,
);

/** The batched agent loader of GraphQL (`Booking.agent`, `Agent.parent`, proposals). */
export const AGENTS_BY_ID = namedStatement<[ids: string[]], AgentRow>(
  'agents_by_id',
  `select ${AGENT_COLUMNS} from agents where id = any($1::uuid[])`,
);

/**
 * One page of each parent's children, oldest first, starting after the child `after` (null: from the
 * first). One statement for every parent of a GraphQL level; the lateral limit keeps each page bounded.
 */
export const CHILDREN_PAGES = namedStatement<[parentIds: string[], after: string | null, limit: number], AgentRow>(
  'children_pages',
  `select page.* from unnest($1::uuid[]) as parent(id)
   cross join lateral (
     select ${AGENT_COLUMNS} from agents child
      where child.parent_id = parent.id
        and ($2::uuid is null or (child.created_at, child.id) > (select created_at, id from agents where id = $2::uuid))
      order by child.created_at, child.id
      limit $3
   ) page`,
  { servedByReplica: true },
);
