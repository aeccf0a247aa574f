import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { startJobRunner } from '../../../src/platform/jobs/queue.js';
import { createLogger } from '../../../src/platform/logger.js';
import { createTestDatabase } from '../../harness.js';

const TIMEOUTS = { connectMs: 2_000, statementMs: 10_000, lockMs: 5_000, idleInTransactionMs: 30_000 };
/** Long enough for the runner to stop listening and polling before the running jobs end. */
const JOBS_OUTLAST_STOP_BY_MS = 300;

/** The job queue on a database of its own, outside the app: what its stop promises about running jobs. */
describe('job runner stop', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let client: pg.Client;

  beforeAll(async () => {
    database = await createTestDatabase();
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });
  afterAll(async () => {
    await client.end();
    await database.drop();
  });

  it('waits for jobs still running, and records them as done before closing its connections', async () => {
    const JOBS = 5;
    let running = 0;
    let allRunning!: () => void;
    const allStarted = new Promise<void>((resolve) => (allRunning = resolve));
    let finish!: () => void;
    const finishing = new Promise<void>((resolve) => (finish = resolve));
    const runner = await startJobRunner({
      connectionString: database.url,
      timeouts: TIMEOUTS,
      logger: createLogger('silent'),
      tasks: {
        hold: async () => {
          if (++running === JOBS) allRunning();
          await finishing;
        },
      },
    });
    await client.query(`select graphile_worker.add_job('hold', '{}'::json) from generate_series(1, ${JOBS})`);
    await allStarted;

    const stopped = runner.stop();
    await new Promise((resolve) => setTimeout(resolve, JOBS_OUTLAST_STOP_BY_MS));
    finish();
    await stopped;

    // Before the fix the completions were still queued for a connection when the pool closed: 5 left.
    const { rows } = await client.query<{ left: number }>(`select count(*)::int as left from graphile_worker.jobs`);
    expect(rows[0]!.left).toBe(0);
  });
});
