import type { Logger } from '../logger.js';
import { prepareDataDir, startEmbeddedPostgres } from './embedded-postgres.js';

export { prepareDataDir };

export interface Database {
  readonly url: string;
  readonly embedded: boolean;
  stop(): Promise<void>;
}

/** `DATABASE_URL` when given; otherwise the embedded PostgreSQL under `dataDir`. */
export async function openDatabase(options: { databaseUrl: string | undefined; dataDir: string; logger: Logger }): Promise<Database> {
  if (options.databaseUrl) return { url: options.databaseUrl, embedded: false, stop: async () => {} };
  const embedded = await startEmbeddedPostgres({ dataDir: options.dataDir, logger: options.logger });
  return { url: embedded.url, embedded: true, stop: () => embedded.stop() };
}
