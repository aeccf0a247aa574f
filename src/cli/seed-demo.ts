import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { migrations } from '../../migrations/index.js';
import { loadConfig } from '../config.js';
import { entities, sqlDefinitions } from '../modules/index.js';
import { openDatabase } from '../platform/db/database.js';
import { createOrm, migrate } from '../platform/db/orm.js';
import { createLogger } from '../platform/logger.js';

/**
 * `npm run seed:demo [-- --tools 300 --votes 3000 --voters 400]`: a directory with something to show.
 * Tools get plausible names, categories, capabilities and pricing; a share are agent submissions;
 * votes are spread over the last 30 days so `trending` differs from `votes`. Runs against
 * DATABASE_URL or the embedded database under DATA_DIR, and can be run again (it adds more).
 */
const { values } = parseArgs({
  options: {
    tools: { type: 'string', default: '300' },
    votes: { type: 'string', default: '3000' },
    voters: { type: 'string', default: '400' },
  },
});
const counts = { tools: Number(values.tools), votes: Number(values.votes), voters: Number(values.voters) };
for (const [name, value] of Object.entries(counts)) {
  if (!Number.isInteger(value) || value < 0) throw new Error(`--${name} must be a whole number`);
}

const ADJECTIVES = ['Swift', 'Clever', 'Quiet', 'Bright', 'Open', 'Lucid', 'Rapid', 'Steady', 'Nimble', 'Keen', 'Bold', 'Deep', 'Plain', 'Tidy', 'Vivid'];
const NOUNS = ['Pilot', 'Scribe', 'Lens', 'Forge', 'Atlas', 'Relay', 'Compass', 'Ledger', 'Beacon', 'Loom', 'Harbor', 'Sprout', 'Prism', 'Anvil', 'Echo'];
const CAPABILITIES = ['summarize', 'translate', 'code-review', 'search', 'transcribe', 'classify', 'extract', 'plan', 'schedule', 'chart', 'draft', 'refactor'];

const config = loadConfig();
const logger = createLogger(config.logLevel);
const database = await openDatabase({ databaseUrl: config.databaseUrl, directUrl: config.databaseDirectUrl, dataDir: config.dataDir, logger });
try {
  // An operator's one-off run: PostgreSQL itself, as migrations.
  const orm = await createOrm({ clientUrl: database.directUrl, entities, migrations, logger, poolMax: 4 });
  await migrate(orm, database.directUrl, sqlDefinitions);
  const em = orm.em.fork();
  const started = performance.now();

  await em.execute(
    `insert into users (id, email, created_at)
     select gen_random_uuid(), 'demo-voter-' || g || '-' || extract(epoch from now())::bigint || '@example.com', now()
       from generate_series(1, ?) g`,
    [counts.voters],
  );
  await em.execute(
    `insert into tools (name, slug, url, url_normalized, description, category_id, capabilities, api_endpoint, auth_method,
                        pricing_model, status, submission_source, submitted_by_agent, vote_count, created_at)
     select name, slug, url, url, description, category_id, capabilities, api_endpoint, auth_method, pricing_model, 'approved',
            case when agent then 'agent' else 'human' end, case when agent then 'demo-agent-' || (g % 7) end, 0, created_at
       from (
         select g,
                (?::jsonb ->> (g % 15)::int) || ' ' || (?::jsonb ->> ((g / 15) % 15)::int) || ' ' || g as name,
                lower((?::jsonb ->> (g % 15)::int) || '-' || (?::jsonb ->> ((g / 15) % 15)::int)) || '-' || g || '-' || seed as slug,
                'https://' || lower((?::jsonb ->> ((g / 15) % 15)::int)) || '-' || g || '-' || seed || '.example.com' as url,
                'A demo tool that helps with ' || (?::jsonb ->> (g % 12)::int) || ' and ' || (?::jsonb ->> ((g / 12) % 12)::int) || '.' as description,
                (select id from categories order by id offset (g % 10) limit 1) as category_id,
                array[(?::jsonb ->> (g % 12)::int), (?::jsonb ->> ((g * 7) % 12)::int)]::text[] as capabilities,
                case when g % 3 = 0 then 'https://api.example.com/v1/tool-' || g end as api_endpoint,
                (array['api_key', 'oauth', 'none', 'other'])[1 + g % 4] as auth_method,
                (array['free', 'freemium', 'paid', 'usage_based'])[1 + g % 4] as pricing_model,
                g % 4 = 0 as agent,
                now() - (g % 90) * interval '1 day' - (g % 24) * interval '1 hour' as created_at
           from generate_series(1, ?) g, (select floor(random() * 1e9)::bigint as seed) s
       ) demo`,
    [...[ADJECTIVES, NOUNS, ADJECTIVES, NOUNS, NOUNS, CAPABILITIES, CAPABILITIES, CAPABILITIES, CAPABILITIES].map((words) => JSON.stringify(words)), counts.tools],
  );
  // Votes through the trigger, so vote_count and the trending counters are exactly what real votes make.
  // Popularity is skewed (a few tools get most votes) and spread over the last 30 days.
  await em.execute(
    `with tool_ids as (select array_agg(id order by id desc) as ids from (select id from tools order by id desc limit ?) newest),
          voter_ids as (select array_agg(id) as ids from users where email like 'demo-voter-%')
     insert into votes (tool_id, user_id, agent_id, created_at)
     select t.ids[1 + floor(power(random(), 2) * cardinality(t.ids))::int],
            u.ids[1 + floor(random() * cardinality(u.ids))::int],
            case when random() < 0.2 then 'demo-agent-' || floor(random() * 7)::int end,
            now() - random() * interval '30 days'
       from generate_series(1, ?), tool_ids t, voter_ids u
      where cardinality(t.ids) > 0 and cardinality(u.ids) > 0
     on conflict (tool_id, user_id) do nothing`,
    [Math.max(counts.tools, 1), counts.votes],
  );
  // Bulk votes leave many dead tuples behind the counters; tidy up so reads start fast.
  await em.execute('vacuum analyze tools, tool_vote_days, votes');
  const [totals] = await em.execute<{ tools: string; votes: string }[]>('select (select count(*) from tools) as tools, (select count(*) from votes) as votes');
  console.log(`seeded in ${((performance.now() - started) / 1000).toFixed(1)} s: the directory now has ${totals?.tools} tools and ${totals?.votes} votes`);
  await orm.close();
} finally {
  await database.stop();
}
