import { Migration20261121000000_agents } from './Migration20261121000000_agents.js';
import { Migration20261121010000_bookings } from './Migration20261121010000_bookings.js';
import { Migration20261121020000_proposals_events_webhooks } from './Migration20261121020000_proposals_events_webhooks.js';
import { Migration20261121030000_directory } from './Migration20261121030000_directory.js';
import { Migration20261121040000_prices } from './Migration20261121040000_prices.js';
import { Migration20261121050000_pair_prices } from './Migration20261121050000_pair_prices.js';
import { Migration20261121060000_price_sources } from './Migration20261121060000_price_sources.js';
import { Migration20261123000000_scheduling_fast_paths } from './Migration20261123000000_scheduling_fast_paths.js';
import { Migration20261123010000_webhook_limit } from './Migration20261123010000_webhook_limit.js';
import { Migration20261123020000_webhook_claim_plan } from './Migration20261123020000_webhook_claim_plan.js';
import { Migration20261123030000_webhook_claim_recheck } from './Migration20261123030000_webhook_claim_recheck.js';
import { Migration20261123040000_booking_cap_live_series } from './Migration20261123040000_booking_cap_live_series.js';
import { Migration20261123050000_webhook_claim_index_order } from './Migration20261123050000_webhook_claim_index_order.js';
import { Migration20261123060000_webhook_fanout } from './Migration20261123060000_webhook_fanout.js';
import { Migration20261123070000_calendar_feeds } from './Migration20261123070000_calendar_feeds.js';
import { Migration20261124000000_free_busy_visibility } from './Migration20261124000000_free_busy_visibility.js';
import { Migration20261124010000_booking_slots_agent_ends } from './Migration20261124010000_booking_slots_agent_ends.js';
import { Migration20261125000000_booking_writers } from './Migration20261125000000_booking_writers.js';
import { Migration20261126000000_agent_family_limits } from './Migration20261126000000_agent_family_limits.js';
import { Migration20261126010000_sql_definitions } from './Migration20261126010000_sql_definitions.js';
import { Migration20261126020000_live_booking_counts } from './Migration20261126020000_live_booking_counts.js';
import { Migration20261126030000_consistency_tokens } from './Migration20261126030000_consistency_tokens.js';
import { Migration20261126100000_one_booking_shape } from './Migration20261126100000_one_booking_shape.js';
import { Migration20261126110000_availability_rules } from './Migration20261126110000_availability_rules.js';
import { Migration20261126120000_buffers_holds_versions } from './Migration20261126120000_buffers_holds_versions.js';
import { Migration20261126200000_booking_change_feed } from './Migration20261126200000_booking_change_feed.js';
import { Migration20261126210000_rate_limits_unlogged } from './Migration20261126210000_rate_limits_unlogged.js';
import { Migration20261127010000_day_slot_counts } from './Migration20261127010000_day_slot_counts.js';
import { Migration20261127040000_webhook_attempts_set_based } from './Migration20261127040000_webhook_attempts_set_based.js';
import { Migration20261127050000_common_working_time } from './Migration20261127050000_common_working_time.js';
import { Migration20261127060000_webhook_deliveries_at_first_attempt } from './Migration20261127060000_webhook_deliveries_at_first_attempt.js';
import { Migration20261127070000_held_slots_index } from './Migration20261127070000_held_slots_index.js';

/**
 * Every migration, oldest first. Migrations are forward-only SQL read by a human before merge; the
 * list is explicit so the compiled server and the TypeScript tests run exactly the same set.
 * Tables, columns, indexes and data change here; functions and triggers are defined in their module's
 * sql/ and applied after these (src/platform/db/sql-definitions.ts), so the function bodies written in
 * migrations before 2026-11-26 are history, replaced by their current definitions.
 */
export const migrations = [
  { name: 'Migration20261121000000_agents', class: Migration20261121000000_agents },
  { name: 'Migration20261121010000_bookings', class: Migration20261121010000_bookings },
  { name: 'Migration20261121020000_proposals_events_webhooks', class: Migration20261121020000_proposals_events_webhooks },
  { name: 'Migration20261121030000_directory', class: Migration20261121030000_directory },
  { name: 'Migration20261121040000_prices', class: Migration20261121040000_prices },
  { name: 'Migration20261121050000_pair_prices', class: Migration20261121050000_pair_prices },
  { name: 'Migration20261121060000_price_sources', class: Migration20261121060000_price_sources },
  { name: 'Migration20261123000000_scheduling_fast_paths', class: Migration20261123000000_scheduling_fast_paths },
  { name: 'Migration20261123010000_webhook_limit', class: Migration20261123010000_webhook_limit },
  { name: 'Migration20261123020000_webhook_claim_plan', class: Migration20261123020000_webhook_claim_plan },
  { name: 'Migration20261123030000_webhook_claim_recheck', class: Migration20261123030000_webhook_claim_recheck },
  { name: 'Migration20261123040000_booking_cap_live_series', class: Migration20261123040000_booking_cap_live_series },
  { name: 'Migration20261123050000_webhook_claim_index_order', class: Migration20261123050000_webhook_claim_index_order },
  { name: 'Migration20261123060000_webhook_fanout', class: Migration20261123060000_webhook_fanout },
  { name: 'Migration20261123070000_calendar_feeds', class: Migration20261123070000_calendar_feeds },
  { name: 'Migration20261124000000_free_busy_visibility', class: Migration20261124000000_free_busy_visibility },
  { name: 'Migration20261124010000_booking_slots_agent_ends', class: Migration20261124010000_booking_slots_agent_ends },
  { name: 'Migration20261125000000_booking_writers', class: Migration20261125000000_booking_writers },
  { name: 'Migration20261126000000_agent_family_limits', class: Migration20261126000000_agent_family_limits },
  { name: 'Migration20261126010000_sql_definitions', class: Migration20261126010000_sql_definitions },
  { name: 'Migration20261126020000_live_booking_counts', class: Migration20261126020000_live_booking_counts },
  { name: 'Migration20261126030000_consistency_tokens', class: Migration20261126030000_consistency_tokens },
  { name: 'Migration20261126100000_one_booking_shape', class: Migration20261126100000_one_booking_shape },
  { name: 'Migration20261126110000_availability_rules', class: Migration20261126110000_availability_rules },
  { name: 'Migration20261126120000_buffers_holds_versions', class: Migration20261126120000_buffers_holds_versions },
  { name: 'Migration20261126200000_booking_change_feed', class: Migration20261126200000_booking_change_feed },
  { name: 'Migration20261126210000_rate_limits_unlogged', class: Migration20261126210000_rate_limits_unlogged },
  { name: 'Migration20261127010000_day_slot_counts', class: Migration20261127010000_day_slot_counts },
  { name: 'Migration20261127040000_webhook_attempts_set_based', class: Migration20261127040000_webhook_attempts_set_based },
  { name: 'Migration20261127050000_common_working_time', class: Migration20261127050000_common_working_time },
  { name: 'Migration20261127060000_webhook_deliveries_at_first_attempt', class: Migration20261127060000_webhook_deliveries_at_first_attempt },
  { name: 'Migration20261127070000_held_slots_index', class: Migration20261127070000_held_slots_index },
];
