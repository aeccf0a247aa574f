import 'reflect-metadata';
import { loadConfig } from '../config.js';
import { migrations } from '../../migrations/index.js';
import { entities, sqlDefinitions } from '../modules/index.js';
import { openDatabase } from '../platform/db/database.js';
import { createOrm, migrate } from '../platform/db/orm.js';
import { createLogger } from '../platform/logger.js';

// `npm run migrate`: applies pending migrations to DATABASE_DIRECT_URL (else DATABASE_URL), or to the embedded database under DATA_DIR.
const config = loadConfig();
const logger = createLogger(config.logLevel);
const database = await openDatabase({ databaseUrl: config.databaseUrl, directUrl: config.databaseDirectUrl, dataDir: config.dataDir, logger });
try {
  const orm = await createOrm({ clientUrl: database.directUrl, entities, migrations, logger });
  const applied = await migrate(orm, database.directUrl, sqlDefinitions);
  console.log(applied.length ? `applied: ${applied.join(', ')}` : 'the database is up to date');
  await orm.close();
} finally {
  await database.stop();
}
