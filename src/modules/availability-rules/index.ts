/**
 * Availability rules: what an agent lets others take from its calendar.
 *
 * Glossary
 * - rules: per agent, in its IANA time zone: weekly working hours (several intervals a day), date overrides,
 *   buffers before and after a booking, minimum notice, maximum advance, limits per local day and ISO week.
 * - working time: the instants the hours and overrides cover (common_working_ranges, sql/).
 * - day counts: the slots starting on each local day of an agent with rules (agent_day_slots), kept by triggers, so
 *   limits are read rather than counted.
 * - override: a date whose hours replace the weekly hours of its weekday (none: a day off).
 * - buffer: time kept free before or after each booking, held by the database (each slot blocks its widened range).
 * - refusal: why a slot cannot be taken (slot_refusals, sql/): overlap, buffer, hours, notice, advance, limit; the
 *   codes are error codes (platform/errors.ts), each writer refuses with the first.
 * - binds: the rules bind everyone but the agent itself, which opts in with `enforceOnOwnBookings`; buffers and
 *   overlaps bind everyone.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import type { Statements } from '../../platform/db/statements.js';
import { AvailabilityOverride, AvailabilityRules } from './entities/availability-rules.entity.js';
import { AvailabilityRulesResolver } from './graphql/rules.resolver.js';
import { rulesTools } from './mcp/rules.tools.js';
import { registerRulesRoutes } from './rest/rules.routes.js';
import { AvailabilityRulesService } from './rules.service.js';
import { agentWorkingRangesFunction } from './sql/agent-working-ranges.function.js';
import { commonWorkingRangesFunction } from './sql/common-working-ranges.function.js';
import { countDaySlotsAfreshTrigger, countDaySlotsTrigger } from './sql/day-slot-counts.trigger.js';
import { slotAdmittedFunction } from './sql/slot-admitted.function.js';
import { slotRefusalsFunction } from './sql/slot-refusals.function.js';
import { zoneOffsetChangeFunction } from './sql/zone-offset-change.function.js';

/** The module's functions and triggers, in their current definitions (applied after the migrations). */
export const availabilityRulesSqlDefinitions = [
  zoneOffsetChangeFunction,
  commonWorkingRangesFunction,
  agentWorkingRangesFunction,
  slotRefusalsFunction,
  slotAdmittedFunction,
  countDaySlotsTrigger,
  countDaySlotsAfreshTrigger,
];

export { describeRefusal, REFUSAL_CODES, refusalError, type HoldRefusal, type Refusal, type RefusalCode } from './refusals.js';

export const availabilityRulesEntities = [AvailabilityRules, AvailabilityOverride];
export const availabilityRulesResolvers = [AvailabilityRulesResolver];
export { RULE_LIMITS, WEEKDAYS, type AvailabilityRulesInput, type AvailabilityRulesView } from './rules.view.js';
export type { AvailabilityRulesService } from './rules.service.js';

export function createAvailabilityRulesModule(deps: { em: EntityManager; clock: Clock; statements: Statements }) {
  const rules = new AvailabilityRulesService(deps.em, deps.clock, deps.statements);
  return {
    rules,
    resolvers: [new AvailabilityRulesResolver(rules)],
    mcpTools: rulesTools(rules),
    registerRoutes: (app: FastifyInstance) => registerRulesRoutes(app, rules),
  };
}
