import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/** Announces every added snapshot to every process (their cached feeds are dropped). */
export const PRICE_SNAPSHOTS_CHANNEL = 'price_snapshots';

/**
 * A snapshot and its rows in one call, announced on `price_snapshots` at its commit. With
 * `p_only_if_first` it adds nothing when any snapshot exists: the bundled reference snapshot of a
 * fresh install, added once however many processes start at once (an advisory lock serialises them).
 * Answers the snapshot as `{id, takenAt, source, rowCount}`, or null when nothing was added. The NOTIFY
 * is inside the write: snapshots come every 30 minutes, not per request.
 */
export const addPriceSnapshotFunction = sqlDefinition(
  'add_price_snapshot',
  `
create or replace function add_price_snapshot(p_taken_at timestamptz, p_source text, p_created_at timestamptz, p_rows jsonb, p_only_if_first boolean)
returns jsonb language plpgsql as $$
declare
  v_id bigint;
  v_added jsonb;
begin
  if p_only_if_first then
    perform pg_advisory_xact_lock(hashtext('add_price_snapshot'));
    if exists (select 1 from price_snapshots) then return null; end if;
  end if;
  insert into price_snapshots (taken_at, source, created_at) values (p_taken_at, p_source, p_created_at) returning id into v_id;
  insert into price_rows (snapshot_id, gpu_slug, provider, spot_price_usd, on_demand_price_usd)
  select v_id, r.slug, r.provider, r.spot, r.on_demand
    from jsonb_to_recordset(p_rows) as r(slug text, provider text, spot numeric, on_demand numeric);
  v_added := jsonb_build_object('id', v_id::text, 'takenAt', p_taken_at, 'source', p_source, 'rowCount', jsonb_array_length(p_rows));
  perform pg_notify('${PRICE_SNAPSHOTS_CHANNEL}', v_added::text);
  return v_added;
end;
$$;
`,
);
