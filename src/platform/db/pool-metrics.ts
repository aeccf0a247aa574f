import type pg from 'pg';
import type { Metrics } from '../metrics/metrics.js';

/**
 * Connections of each pool in use, idle, and callers waiting for one, read from `pg`'s own counters
 * when scraped. Waiting callers that stay above zero mean the pool is the bottleneck (see
 * DB_CONNECT_TIMEOUT_MS: past it they fail).
 */
export function registerPoolMetrics(metrics: Metrics, pools: Readonly<Record<string, pg.Pool>>): void {
  metrics.gauge('gateway_db_pool_connections', 'Database connections by pool and state (in_use, idle)', ['pool', 'state'], (set) => {
    for (const [pool, { totalCount, idleCount }] of Object.entries(pools)) {
      set(totalCount - idleCount, { pool, state: 'in_use' });
      set(idleCount, { pool, state: 'idle' });
    }
  });
  metrics.gauge('gateway_db_pool_waiting', 'Callers waiting for a database connection, by pool', ['pool'], (set) => {
    for (const [pool, { waitingCount }] of Object.entries(pools)) set(waitingCount, { pool });
  });
}
