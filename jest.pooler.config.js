/**
 * `npm run test:pooler`: the contract's parts that depend on how connections are held, with PgBouncer
 * in transaction mode between every gateway and PostgreSQL (test/pooler/global-setup.mjs): events
 * across processes (LISTEN on the direct connection), credential caches dropped on every process,
 * webhooks once, rate limits shared (named statements unnamed), consistency tokens, the hot named statements of bookings, proposals and availability, locks that
 * serialise writers, subscriptions, MCP, the job queue, and the pooler's own tests.
 */
import { existsSync } from 'node:fs';
import base from './jest.config.js';

const THROUGH_THE_POOLER = [
  'test/pooler/**/*.test.ts',
  'test/integration/booking-events/booking-events.test.ts',
  'test/integration/agents/agents.test.ts',
  'test/integration/platform/consistency-tokens.test.ts',
  'test/integration/webhooks/webhooks.test.ts',
  'test/integration/directory/rate-limits.test.ts',
  'test/integration/directory/tools.test.ts',
  'test/integration/bookings/bookings.test.ts',
  'test/integration/bookings/booking-writers.test.ts',
  'test/integration/proposals/proposals.test.ts',
  'test/integration/availability/availability.test.ts',
  'test/integration/calendar-feeds/calendar-feeds.test.ts',
  'test/integration/platform/graphql-ws.test.ts',
  'test/integration/platform/job-queue.test.ts',
  'test/integration/mcp/mcp.test.ts',
  'test/integration/status/status.test.ts',
  'test/integration/booking-events/change-feed.test.ts',
];

// A listed file that moved would silently leave the run (jest ignores a pattern that matches nothing).
const missing = THROUGH_THE_POOLER.filter((path) => !path.includes('*') && !existsSync(new URL(path, import.meta.url)));
if (missing.length > 0) throw new Error(`jest.pooler.config.js lists files that do not exist: ${missing.join(', ')}`);

export default {
  ...base,
  testMatch: THROUGH_THE_POOLER.map((path) => `<rootDir>/${path}`),
  testPathIgnorePatterns: ['/node_modules/'],
  // One suite at a time: every suite's processes share the pooler's few server connections.
  maxWorkers: 1,
  globalSetup: '<rootDir>/test/pooler/global-setup.mjs',
  globalTeardown: '<rootDir>/test/pooler/global-teardown.mjs',
};
