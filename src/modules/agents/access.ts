import { AppError } from '../../platform/errors.js';
import type { FreeBusyVisibility } from './entities/agent.entity.js';
import type { AgentRecord } from './sql/agent.sql.js';

/**
 * Who may read or act on an agent's things, decided here and nowhere else (immich's access.ts): the
 * services ask these functions, and the SQL that decides the same inside a statement is written from
 * the same table (`may_see_free_busy`, sql/may-see-free-busy.function.ts) and held to it by a test
 * (access.test.ts). Everything is relative to the calling agent.
 */

/** How the calling agent stands to another agent. */
export type Relation = 'self' | 'parent' | 'child' | 'other';

/** The relation of `actor` to `subject`: `parent` when the actor is the subject's parent. */
export function relationOf(actor: Pick<AgentRecord, 'id' | 'parentId'>, subject: Pick<AgentRecord, 'id' | 'parentId'>): Relation {
  if (actor.id === subject.id) return 'self';
  if (subject.parentId === actor.id) return 'parent';
  if (actor.parentId === subject.id) return 'child';
  return 'other';
}

/** The table: which relations may do what. */
export const ACCESS = {
  /** A row an agent owns (a booking, a webhook and its deliveries, a calendar feed): only the owner reads or changes it. */
  ownRow: ['self'],
  /** An agent's settings (metadata, config, free/busy visibility, availability rules): the agent and its parent. */
  settings: ['self', 'parent'],
  /**
   * An agent's change feed (what happened to its bookings, with each booking as it is now): the agent
   * and its parent, which created it and already reads its settings. A child does not read its
   * parent's feed, nor a sibling another's: their bookings are rows they do not own. A family feed is
   * every feed its caller may read, in one cursor order (the caller's own and its children's).
   */
  changeFeed: ['self', 'parent'],
  /**
   * Writing on an agent's calendar for it (holds, group bookings): the agent itself and its parent, so a caller acts
   * for its own calendar and its children's. The agent's rules bind everyone but itself (unless it enforces them on
   * its own bookings).
   */
  actFor: ['self', 'parent'],
  /** An agent's free/busy (availability, first-available proposals), by the visibility the agent chose. */
  freeBusy: {
    anyone: ['self', 'parent', 'child', 'other'],
    family: ['self', 'parent', 'child'],
    nobody: ['self'],
  },
} as const satisfies {
  ownRow: readonly Relation[];
  settings: readonly Relation[];
  changeFeed: readonly Relation[];
  actFor: readonly Relation[];
  freeBusy: Record<FreeBusyVisibility, readonly Relation[]>;
};

const allows = (relations: readonly Relation[], relation: Relation) => relations.includes(relation);

/** Fails with `forbidden` unless the calling agent owns the row (`what`: "booking", "webhook", …). */
export function requireOwner(actor: Pick<AgentRecord, 'id'>, ownerId: string, what: string): void {
  if (!allows(ACCESS.ownRow, actor.id === ownerId ? 'self' : 'other')) throw notTheOwner(what);
}

/** The refusal of a row the caller does not own, also where a SQL writer made the same decision (`{"forbidden": true}`). */
export function notTheOwner(what: string): AppError {
  return new AppError('forbidden', `the ${what} belongs to another agent`);
}

/**
 * The refusal of calendars the caller may not act for (`actFor`), also where a SQL writer made the decision: names
 * their places in the request (`agentIds[2]`), never the ids, so a refusal shows nothing of another agent's.
 */
export function notActingFor(action: string, requested: readonly string[], refused: readonly string[]): AppError {
  const places = requested.flatMap((id, index) => (refused.includes(id.toLowerCase()) ? [`agentIds[${index}]`] : []));
  return new AppError('forbidden', `may not ${action} ${places.join(', ') || 'these calendars'}: an agent acts for its own calendar and its children's only`);
}

/** Whether the calling agent may read an agent's own settings. */
export function maySeeSettings(actor: Pick<AgentRecord, 'id' | 'parentId'>, agent: Pick<AgentRecord, 'id' | 'parentId'>): boolean {
  return allows(ACCESS.settings, relationOf(actor, agent));
}

/** Whether the calling agent may read an agent's change feed. */
export function mayReadChangeFeed(actor: Pick<AgentRecord, 'id' | 'parentId'>, agent: Pick<AgentRecord, 'id' | 'parentId'>): boolean {
  return allows(ACCESS.changeFeed, relationOf(actor, agent));
}

/** Whether the calling agent may write on an agent's calendar for it (holds, group bookings). */
export function mayActFor(actor: Pick<AgentRecord, 'id' | 'parentId'>, agent: Pick<AgentRecord, 'id' | 'parentId'>): boolean {
  return allows(ACCESS.actFor, relationOf(actor, agent));
}

/** Whether the calling agent may ask for an agent's free/busy. */
export function maySeeFreeBusy(actor: Pick<AgentRecord, 'id' | 'parentId'>, agent: Pick<AgentRecord, 'id' | 'parentId' | 'freeBusyVisibility'>): boolean {
  return allows(ACCESS.freeBusy[agent.freeBusyVisibility], relationOf(actor, agent));
}

/** Each relation as a SQL condition over a caller id, the caller's parent id and an agent row alias. */
function relationConditions(caller: string, callerParent: string, agent: string): Record<Relation, string> {
  return {
    self: `${agent}.id = ${caller}`,
    parent: `${agent}.parent_id = ${caller}`,
    child: `${agent}.id = ${callerParent}`,
    other: 'true',
  };
}

/**
 * The agents whose change feed a caller may read, as a SQL condition over a caller id, the caller's
 * parent id and an agent row alias: the members of the caller's family feed (`booking_changes`).
 */
export function changeFeedRuleSql(caller: string, callerParent: string, agent: string): string {
  const relationSql = relationConditions(caller, callerParent, agent);
  // A root has no parent: a null comparison must read as "no".
  return `coalesce(${ACCESS.changeFeed.map((relation) => `(${relationSql[relation]})`).join(' or ')}, false)`;
}

/**
 * The act-for rule as a SQL expression over a caller id and an agent row alias: what the SQL writers that write on
 * several calendars (hold_create, create_group_booking) evaluate. Its relations never need the caller's parent.
 */
export function actForRuleSql(caller: string, agent: string): string {
  const sql = relationConditions(caller, 'null', agent);
  return `coalesce(${ACCESS.actFor.map((relation) => `(${sql[relation]})`).join(' or ')}, false)`;
}

/**
 * The free/busy rule as a SQL expression over a caller id, the caller's parent id and an agent row
 * alias: what `may_see_free_busy` and any statement deciding it in bulk evaluate.
 */
export function freeBusyRuleSql(caller: string, callerParent: string, agent: string): string {
  const relations = relationConditions(caller, callerParent, agent);
  const byVisibility = Object.entries(ACCESS.freeBusy).map(
    ([visibility, relationsAllowed]) => `(${agent}.free_busy_visibility = '${visibility}' and (${relationsAllowed.map((relation) => relations[relation]).join(' or ')}))`,
  );
  // A root has no parent: its comparison is null, which must read as "no", not as unknown.
  return `coalesce(${byVisibility.join(' or ')}, false)`;
}
