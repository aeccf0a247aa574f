import { namedStatement } from '../../../platform/db/statements.js';

/** Each category with its number of tools, in catalogue order. */
export const CATEGORIES = namedStatement<[], { id: number; name: string; slug: string; tool_count: string }>(
  'directory_categories',
  `select c.id, c.name, c.slug, count(t.id) as tool_count
     from categories c left join tools t on t.category_id = c.id
    group by c.id order by c.position, c.id`,
  { servedByReplica: true },
);

/** The directory's counters (`GET /api/stats`). */
export const DIRECTORY_STATS = namedStatement<[], { total_tools: string; total_votes: string; agent_submissions: string; agent_votes: string }>(
  'directory_stats',
  `select (select count(*) from tools) as total_tools,
          (select count(*) from votes) as total_votes,
          (select count(*) from tools where submission_source = 'agent') as agent_submissions,
          (select count(*) from votes where agent_id is not null) as agent_votes`,
  { servedByReplica: true },
);

/**
 * Trending: votes of the last `days` UTC days from the per-day counters (an index range, never the vote
 * rows), each day weighing `exp((day - today) · decay)`; ties by total votes, then newest.
 */
export const TRENDING_ORDER = namedStatement<[today: string, decayPerDay: number, days: number, categoryId: number | null], { id: string }>(
  'directory_trending_order',
  `with recent as (
     select tool_id, sum(votes * exp((day - $1::date)::float8 * $2::float8)) as score
       from tool_vote_days
      where day > $1::date - $3::int and day <= $1::date
      group by tool_id
   )
   select t.id from tools t left join recent r on r.tool_id = t.id
    where ($4::int is null or t.category_id = $4::int)
    order by coalesce(r.score, 0) desc, t.vote_count desc, t.id desc`,
  { servedByReplica: true },
);

export const TOGGLE_VOTE = namedStatement<
  [userId: string, toolId: number, agentId: string | null, at: Date],
  { outcome: { missing: true } | { voted: boolean; voteCount: number } }
>('toggle_vote', 'select toggle_vote($1::uuid, $2::bigint, $3::text, $4::timestamptz) as outcome');

export const REDEEM_MAGIC_LINK = namedStatement<[tokenHash: string, at: Date], { id: string; email: string }>(
  'redeem_magic_link',
  'select id, email from redeem_magic_link($1::text, $2::timestamptz)',
);
