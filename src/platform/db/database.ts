import type { Logger } from '../logger.js';
import { prepareDataDir, startEmbeddedPostgres } from './embedded-postgres.js';

export { prepareDataDir };

export interface Database {
  /** Where the pooled work goes (the ORM, named statements, rate limits): PostgreSQL or a pooler in front of it. */
  readonly url: string;
  /** PostgreSQL itself, for what needs a session of its own: LISTEN, the job queue, migrations. */
  readonly directUrl: string;
  readonly embedded: boolean;
  stop(): Promise<void>;
}

/** `DATABASE_URL` (and `DATABASE_DIRECT_URL`) when given; otherwise the embedded PostgreSQL under `dataDir`. */
export async function openDatabase(options: { databaseUrl: string | undefined; directUrl?: string | undefined; dataDir: string; logger: Logger }): Promise<Database> {
  if (options.databaseUrl) return { url: options.databaseUrl, directUrl: options.directUrl ?? options.databaseUrl, embedded: false, stop: async () => {} };
  const embedded = await startEmbeddedPostgres({ dataDir: options.dataDir, logger: options.logger });
  return { url: embedded.url, directUrl: embedded.url, embedded: true, stop: () => embedded.stop() };
}
