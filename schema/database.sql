-- The database schema after every migration (migrations/) and SQL definition (src/modules/*/sql/).
-- Written by `npm run db:emit` from PostgreSQL's catalogs; CI fails when it differs (`npm run db:check`).
-- Do not edit: change a migration or a definition and emit again.

-- Extensions

create extension btree_gist;

-- Tables

create table agent_day_slots (
  agent_id uuid not null,
  on_date date not null,
  booked integer default 0 not null,
  held integer default 0 not null
);

create table agent_families (
  root_id uuid not null,
  members integer not null
);

create table agent_live_bookings (
  agent_id uuid not null,
  counted_after timestamp with time zone not null,
  live integer not null
);

create table agents (
  id uuid not null,
  name character varying(120) not null,
  metadata jsonb not null,
  config jsonb not null,
  token_hash character varying(64) not null,
  idempotency_key character varying(255),
  parent_id uuid,
  created_at timestamp with time zone not null,
  free_busy_visibility character varying(16) default 'family'::character varying not null,
  root_id uuid
);

create table availability_overrides (
  agent_id uuid not null,
  on_date date not null,
  hours int4multirange not null
);

create table availability_rules (
  agent_id uuid not null,
  time_zone text not null,
  weekly_hours int4multirange[],
  buffer_before_minutes integer default 0 not null,
  buffer_after_minutes integer default 0 not null,
  minimum_notice_minutes integer default 0 not null,
  maximum_advance_days integer,
  daily_limit integer,
  weekly_limit integer,
  enforce_on_own_bookings boolean default false not null,
  updated_at timestamp with time zone not null
);

create table booking_events (
  id bigint default nextval('booking_events_id_seq'::regclass) not null,
  agent_id uuid not null,
  type character varying(32) not null,
  booking_id uuid not null,
  booking jsonb not null,
  created_at timestamp with time zone not null,
  previous jsonb
);

create table booking_events_pruned (
  agent_id uuid not null,
  through bigint not null,
  pruned_at timestamp with time zone not null
);

create table booking_slots (
  booking_id uuid not null,
  starts_at timestamp with time zone not null,
  ends_at timestamp with time zone not null,
  agent_id uuid not null,
  blocked_from timestamp with time zone not null,
  blocked_until timestamp with time zone not null,
  hold_id uuid
);

create table bookings (
  id uuid not null,
  agent_id uuid not null,
  starts_at timestamp with time zone not null,
  ends_at timestamp with time zone not null,
  status character varying(16) default 'confirmed'::character varying not null,
  rrule text,
  exdates jsonb not null,
  warning_sent_at timestamp with time zone,
  created_at timestamp with time zone not null,
  cancelled_at timestamp with time zone,
  live_until timestamp with time zone,
  hold_id uuid,
  version integer default 1 not null
);

create table calendar_feeds (
  id uuid not null,
  agent_id uuid not null,
  token_hash character varying(64) not null,
  created_at timestamp with time zone not null
);

create table categories (
  id integer default nextval('categories_id_seq'::regclass) not null,
  name character varying(100) not null,
  slug character varying(100) not null,
  "position" integer default 0 not null
);

create unlogged table consistency_tokens (
  credential_hash text not null,
  "position" pg_lsn not null,
  written_at timestamp with time zone default now() not null
);

create table holds (
  id uuid not null,
  holder_agent_id uuid not null,
  agent_ids uuid[] not null,
  starts_at timestamp with time zone not null,
  ends_at timestamp with time zone not null,
  expires_at timestamp with time zone not null,
  created_at timestamp with time zone not null,
  confirmed_at timestamp with time zone,
  released_at timestamp with time zone
);

create table idempotency_keys (
  agent_id uuid not null,
  operation character varying(32) not null,
  key character varying(255) not null,
  request_hash character varying(64) not null,
  outcome jsonb not null,
  created_at timestamp with time zone not null
);

create table magic_link_tokens (
  token_hash character varying(64) not null,
  email character varying(254) not null,
  expires_at timestamp with time zone not null,
  used_at timestamp with time zone,
  created_at timestamp with time zone not null
);

create table mikro_orm_migrations (
  id integer default nextval('mikro_orm_migrations_id_seq'::regclass) not null,
  name character varying(255) not null,
  executed_at timestamp(6) with time zone default CURRENT_TIMESTAMP(6) not null
);

create table pair_prices (
  pair character varying(32) not null,
  price numeric(24,10) not null,
  source character varying(16) not null,
  observed_at timestamp with time zone not null
);

create table price_rows (
  snapshot_id bigint not null,
  gpu_slug character varying(16) not null,
  provider character varying(16) not null,
  spot_price_usd numeric(12,4),
  on_demand_price_usd numeric(12,4)
);

create table price_snapshots (
  id bigint default nextval('price_snapshots_id_seq'::regclass) not null,
  taken_at timestamp with time zone not null,
  source character varying(32) not null,
  created_at timestamp with time zone not null
);

create table price_sources (
  provider character varying(16) not null,
  last_success_at timestamp with time zone,
  last_error_at timestamp with time zone,
  last_error text,
  last_row_count integer default 0 not null
);

create table proposals (
  id uuid not null,
  proposer_agent_id uuid not null,
  target_agent_id uuid not null,
  starts_at timestamp with time zone not null,
  ends_at timestamp with time zone not null,
  status character varying(16) default 'pending'::character varying not null,
  booking_id uuid,
  created_at timestamp with time zone not null,
  decided_at timestamp with time zone
);

create unlogged table rate_limits (
  key character varying(255) not null,
  points integer default 0 not null,
  expire bigint
);

create table settings (
  key character varying(64) not null,
  value text not null
);

create table sql_definitions (
  name text not null,
  sha256 text not null,
  applied_at timestamp with time zone default now() not null
);

create table tool_vote_days (
  tool_id bigint not null,
  day date not null,
  votes integer not null
);

create table tools (
  id bigint default nextval('tools_id_seq'::regclass) not null,
  name character varying(255) not null,
  slug character varying(300) not null,
  url text not null,
  url_normalized text not null,
  description character varying(1000) not null,
  category_id integer not null,
  capabilities text[] not null,
  api_endpoint text,
  auth_method character varying(16),
  pricing_model character varying(16),
  status character varying(16) default 'approved'::character varying not null,
  submission_source character varying(8) not null,
  submitted_by_agent character varying(128),
  submitted_by_user_id uuid,
  vote_count integer default 0 not null,
  created_at timestamp with time zone not null
);

create table users (
  id uuid not null,
  email character varying(254) not null,
  created_at timestamp with time zone not null,
  last_sign_in_at timestamp with time zone
);

create table votes (
  tool_id bigint not null,
  user_id uuid not null,
  agent_id character varying(128),
  created_at timestamp with time zone not null
);

create table webhook_attempts (
  id bigint default nextval('webhook_attempts_id_seq'::regclass) not null,
  delivery_id uuid not null,
  attempt integer not null,
  attempted_at timestamp with time zone not null,
  status_code integer,
  error text,
  duration_ms integer not null
);

create table webhook_deliveries (
  id uuid not null,
  webhook_id uuid not null,
  event_id bigint not null,
  status character varying(16) not null,
  attempts integer default 0 not null,
  next_attempt_at timestamp with time zone,
  delivered_at timestamp with time zone,
  last_error text,
  created_at timestamp with time zone not null
);

create table webhook_fanout (
  event_id bigint not null,
  leased_until timestamp with time zone,
  deliveries integer default 1 not null
);

create table webhooks (
  id uuid not null,
  agent_id uuid not null,
  url text not null,
  events text[] not null,
  secret character varying(64) not null,
  consecutive_failures integer default 0 not null,
  disabled_at timestamp with time zone,
  disabled_reason text,
  created_at timestamp with time zone not null
);

-- Constraints

alter table agent_day_slots add constraint agent_day_slots_agent_id_foreign FOREIGN KEY (agent_id) REFERENCES availability_rules(agent_id) ON DELETE CASCADE;

alter table agent_day_slots add constraint agent_day_slots_counts_check CHECK (((booked >= 0) AND (held >= 0)));

alter table agent_day_slots add constraint agent_day_slots_pkey PRIMARY KEY (agent_id, on_date);

alter table agent_families add constraint agent_families_members_check CHECK ((members >= 1));

alter table agent_families add constraint agent_families_pkey PRIMARY KEY (root_id);

alter table agent_families add constraint agent_families_root_id_foreign FOREIGN KEY (root_id) REFERENCES agents(id) ON UPDATE CASCADE ON DELETE CASCADE;

alter table agent_live_bookings add constraint agent_live_bookings_agent_id_fkey FOREIGN KEY (agent_id) REFERENCES agents(id) ON DELETE CASCADE;

alter table agent_live_bookings add constraint agent_live_bookings_live_check CHECK ((live >= 0));

alter table agent_live_bookings add constraint agent_live_bookings_pkey PRIMARY KEY (agent_id);

alter table agents add constraint agents_free_busy_visibility_check CHECK (((free_busy_visibility)::text = ANY ((ARRAY['family'::character varying, 'anyone'::character varying, 'nobody'::character varying])::text[])));

alter table agents add constraint agents_idempotency_key_key UNIQUE (idempotency_key);

alter table agents add constraint agents_name_check CHECK ((char_length((name)::text) >= 1));

alter table agents add constraint agents_parent_id_foreign FOREIGN KEY (parent_id) REFERENCES agents(id) ON DELETE RESTRICT;

alter table agents add constraint agents_pkey PRIMARY KEY (id);

alter table agents add constraint agents_root_id_check CHECK ((root_id IS NOT NULL));

alter table agents add constraint agents_root_id_foreign FOREIGN KEY (root_id) REFERENCES agents(id) ON DELETE RESTRICT;

alter table agents add constraint agents_token_hash_key UNIQUE (token_hash);

alter table availability_overrides add constraint availability_overrides_agent_id_foreign FOREIGN KEY (agent_id) REFERENCES availability_rules(agent_id) ON DELETE CASCADE;

alter table availability_overrides add constraint availability_overrides_hours_check CHECK (('{[0,1440)}'::int4multirange @> hours));

alter table availability_overrides add constraint availability_overrides_pkey PRIMARY KEY (agent_id, on_date);

alter table availability_rules add constraint availability_rules_advance_check CHECK (((maximum_advance_days >= 1) AND (maximum_advance_days <= 1095)));

alter table availability_rules add constraint availability_rules_agent_id_foreign FOREIGN KEY (agent_id) REFERENCES agents(id) ON UPDATE CASCADE ON DELETE CASCADE;

alter table availability_rules add constraint availability_rules_buffers_check CHECK (((buffer_before_minutes >= 0) AND (buffer_before_minutes <= 720) AND (buffer_after_minutes >= 0) AND (buffer_after_minutes <= 720)));

alter table availability_rules add constraint availability_rules_limits_check CHECK (((daily_limit >= 1) AND (daily_limit <= 1000) AND (weekly_limit >= 1) AND (weekly_limit <= 5000)));

alter table availability_rules add constraint availability_rules_notice_check CHECK (((minimum_notice_minutes >= 0) AND (minimum_notice_minutes <= 43200)));

alter table availability_rules add constraint availability_rules_pkey PRIMARY KEY (agent_id);

alter table availability_rules add constraint availability_rules_time_zone_check CHECK ((timezone(time_zone, '2000-01-01 00:00:00+00'::timestamp with time zone) IS NOT NULL));

alter table availability_rules add constraint availability_rules_weekly_hours_check CHECK (((weekly_hours IS NULL) OR ((array_length(weekly_hours, 1) = 7) AND (array_lower(weekly_hours, 1) = 1) AND ('{[0,1440)}'::int4multirange @> ALL (weekly_hours)))));

alter table booking_events add constraint booking_events_agent_id_foreign FOREIGN KEY (agent_id) REFERENCES agents(id) ON DELETE CASCADE;

alter table booking_events add constraint booking_events_pkey PRIMARY KEY (id);

alter table booking_events add constraint booking_events_type_check CHECK (((type)::text = ANY ((ARRAY['booking.created'::character varying, 'booking.cancelled'::character varying, 'booking.transferred'::character varying, 'booking.reminder'::character varying, 'booking.rescheduled'::character varying])::text[])));

alter table booking_events_pruned add constraint booking_events_pruned_agent_id_foreign FOREIGN KEY (agent_id) REFERENCES agents(id) ON DELETE CASCADE;

alter table booking_events_pruned add constraint booking_events_pruned_pkey PRIMARY KEY (agent_id);

alter table booking_slots add constraint booking_slots_agent_id_foreign FOREIGN KEY (agent_id) REFERENCES agents(id) ON DELETE CASCADE;

alter table booking_slots add constraint booking_slots_blocked_check CHECK (((blocked_from <= starts_at) AND (blocked_until >= ends_at)));

alter table booking_slots add constraint booking_slots_booking_id_foreign FOREIGN KEY (booking_id) REFERENCES bookings(id) ON DELETE CASCADE;

alter table booking_slots add constraint booking_slots_no_overlap EXCLUDE USING gist (agent_id WITH =, tstzrange(blocked_from, blocked_until, '[)'::text) WITH &&);

alter table booking_slots add constraint booking_slots_pkey PRIMARY KEY (booking_id, starts_at);

alter table bookings add constraint bookings_agent_id_foreign FOREIGN KEY (agent_id) REFERENCES agents(id) ON DELETE CASCADE;

alter table bookings add constraint bookings_held_check CHECK ((((status)::text <> 'held'::text) OR (hold_id IS NOT NULL)));

alter table bookings add constraint bookings_hold_id_foreign FOREIGN KEY (hold_id) REFERENCES holds(id) ON DELETE SET NULL;

alter table bookings add constraint bookings_pkey PRIMARY KEY (id);

alter table bookings add constraint bookings_range_check CHECK ((ends_at > starts_at));

alter table bookings add constraint bookings_status_check CHECK (((status)::text = ANY ((ARRAY['confirmed'::character varying, 'cancelled'::character varying, 'held'::character varying])::text[])));

alter table calendar_feeds add constraint calendar_feeds_agent_id_foreign FOREIGN KEY (agent_id) REFERENCES agents(id) ON DELETE CASCADE;

alter table calendar_feeds add constraint calendar_feeds_pkey PRIMARY KEY (id);

alter table calendar_feeds add constraint calendar_feeds_token_hash_key UNIQUE (token_hash);

alter table categories add constraint categories_pkey PRIMARY KEY (id);

alter table categories add constraint categories_slug_key UNIQUE (slug);

alter table consistency_tokens add constraint consistency_tokens_pkey PRIMARY KEY (credential_hash);

alter table holds add constraint holds_calendars_check CHECK ((cardinality(agent_ids) >= 1));

alter table holds add constraint holds_holder_agent_id_foreign FOREIGN KEY (holder_agent_id) REFERENCES agents(id) ON DELETE CASCADE;

alter table holds add constraint holds_outcome_check CHECK (((confirmed_at IS NULL) OR (released_at IS NULL)));

alter table holds add constraint holds_pkey PRIMARY KEY (id);

alter table holds add constraint holds_range_check CHECK ((ends_at > starts_at));

alter table idempotency_keys add constraint idempotency_keys_agent_id_foreign FOREIGN KEY (agent_id) REFERENCES agents(id) ON DELETE CASCADE;

alter table idempotency_keys add constraint idempotency_keys_pkey PRIMARY KEY (agent_id, operation, key);

alter table magic_link_tokens add constraint magic_link_tokens_pkey PRIMARY KEY (token_hash);

alter table mikro_orm_migrations add constraint mikro_orm_migrations_pkey PRIMARY KEY (id);

alter table pair_prices add constraint pair_prices_pkey PRIMARY KEY (pair);

alter table price_rows add constraint price_rows_gpu_check CHECK (((gpu_slug)::text = ANY ((ARRAY['h100'::character varying, 'h200'::character varying, 'a100'::character varying, 'l40s'::character varying, 'a10g'::character varying, 't4'::character varying, 'rtx-4090'::character varying, 'v100'::character varying])::text[])));

alter table price_rows add constraint price_rows_pkey PRIMARY KEY (snapshot_id, gpu_slug, provider);

alter table price_rows add constraint price_rows_prices_check CHECK (((COALESCE(spot_price_usd, (0)::numeric) >= (0)::numeric) AND (COALESCE(on_demand_price_usd, (0)::numeric) >= (0)::numeric)));

alter table price_rows add constraint price_rows_provider_check CHECK (((provider)::text = ANY ((ARRAY['aws'::character varying, 'azure'::character varying, 'gcp'::character varying, 'oci'::character varying, 'lambda'::character varying, 'runpod'::character varying, 'vast'::character varying])::text[])));

alter table price_rows add constraint price_rows_snapshot_id_foreign FOREIGN KEY (snapshot_id) REFERENCES price_snapshots(id) ON DELETE CASCADE;

alter table price_snapshots add constraint price_snapshots_pkey PRIMARY KEY (id);

alter table price_sources add constraint price_sources_pkey PRIMARY KEY (provider);

alter table proposals add constraint proposals_booking_id_foreign FOREIGN KEY (booking_id) REFERENCES bookings(id) ON DELETE SET NULL;

alter table proposals add constraint proposals_distinct_agents_check CHECK ((proposer_agent_id <> target_agent_id));

alter table proposals add constraint proposals_pkey PRIMARY KEY (id);

alter table proposals add constraint proposals_proposer_agent_id_foreign FOREIGN KEY (proposer_agent_id) REFERENCES agents(id) ON DELETE CASCADE;

alter table proposals add constraint proposals_range_check CHECK ((ends_at > starts_at));

alter table proposals add constraint proposals_status_check CHECK (((status)::text = ANY ((ARRAY['pending'::character varying, 'accepted'::character varying, 'declined'::character varying, 'withdrawn'::character varying])::text[])));

alter table proposals add constraint proposals_target_agent_id_foreign FOREIGN KEY (target_agent_id) REFERENCES agents(id) ON DELETE CASCADE;

alter table rate_limits add constraint rate_limits_pkey PRIMARY KEY (key);

alter table settings add constraint settings_pkey PRIMARY KEY (key);

alter table sql_definitions add constraint sql_definitions_pkey PRIMARY KEY (name);

alter table tool_vote_days add constraint tool_vote_days_pkey PRIMARY KEY (tool_id, day);

alter table tool_vote_days add constraint tool_vote_days_tool_id_foreign FOREIGN KEY (tool_id) REFERENCES tools(id) ON DELETE CASCADE;

alter table tool_vote_days add constraint tool_vote_days_votes_check CHECK ((votes >= 0));

alter table tools add constraint tools_auth_method_check CHECK (((auth_method)::text = ANY ((ARRAY['api_key'::character varying, 'oauth'::character varying, 'none'::character varying, 'other'::character varying])::text[])));

alter table tools add constraint tools_category_id_foreign FOREIGN KEY (category_id) REFERENCES categories(id) ON DELETE RESTRICT;

alter table tools add constraint tools_name_check CHECK ((char_length((name)::text) >= 1));

alter table tools add constraint tools_pkey PRIMARY KEY (id);

alter table tools add constraint tools_pricing_model_check CHECK (((pricing_model)::text = ANY ((ARRAY['free'::character varying, 'freemium'::character varying, 'paid'::character varying, 'usage_based'::character varying])::text[])));

alter table tools add constraint tools_slug_key UNIQUE (slug);

alter table tools add constraint tools_source_check CHECK (((submission_source)::text = ANY ((ARRAY['human'::character varying, 'agent'::character varying])::text[])));

alter table tools add constraint tools_status_check CHECK (((status)::text = 'approved'::text));

alter table tools add constraint tools_submitted_by_user_id_foreign FOREIGN KEY (submitted_by_user_id) REFERENCES users(id) ON DELETE SET NULL;

alter table tools add constraint tools_url_normalized_key UNIQUE (url_normalized);

alter table tools add constraint tools_vote_count_check CHECK ((vote_count >= 0));

alter table users add constraint users_email_key UNIQUE (email);

alter table users add constraint users_pkey PRIMARY KEY (id);

alter table votes add constraint votes_pkey PRIMARY KEY (tool_id, user_id);

alter table votes add constraint votes_tool_id_foreign FOREIGN KEY (tool_id) REFERENCES tools(id) ON UPDATE CASCADE ON DELETE CASCADE;

alter table votes add constraint votes_user_id_foreign FOREIGN KEY (user_id) REFERENCES users(id) ON UPDATE CASCADE ON DELETE CASCADE;

alter table webhook_attempts add constraint webhook_attempts_delivery_id_foreign FOREIGN KEY (delivery_id) REFERENCES webhook_deliveries(id) ON DELETE CASCADE;

alter table webhook_attempts add constraint webhook_attempts_pkey PRIMARY KEY (id);

alter table webhook_deliveries add constraint webhook_deliveries_event_id_foreign FOREIGN KEY (event_id) REFERENCES booking_events(id) ON DELETE CASCADE;

alter table webhook_deliveries add constraint webhook_deliveries_pkey PRIMARY KEY (id);

alter table webhook_deliveries add constraint webhook_deliveries_status_check CHECK (((status)::text = ANY ((ARRAY['pending'::character varying, 'delivered'::character varying, 'failed'::character varying])::text[])));

alter table webhook_deliveries add constraint webhook_deliveries_webhook_id_foreign FOREIGN KEY (webhook_id) REFERENCES webhooks(id) ON DELETE CASCADE;

alter table webhook_fanout add constraint webhook_fanout_event_id_foreign FOREIGN KEY (event_id) REFERENCES booking_events(id) ON DELETE CASCADE;

alter table webhook_fanout add constraint webhook_fanout_pkey PRIMARY KEY (event_id);

alter table webhooks add constraint webhooks_agent_id_foreign FOREIGN KEY (agent_id) REFERENCES agents(id) ON DELETE CASCADE;

alter table webhooks add constraint webhooks_pkey PRIMARY KEY (id);

-- Indexes

CREATE INDEX agents_parent_id_idx ON public.agents USING btree (parent_id);

CREATE UNIQUE INDEX agents_single_root ON public.agents USING btree (((parent_id IS NULL))) WHERE (parent_id IS NULL);

CREATE INDEX booking_events_agent_idx ON public.booking_events USING btree (agent_id, id);

CREATE INDEX booking_slots_agent_blocked_idx ON public.booking_slots USING btree (agent_id, blocked_until) INCLUDE (blocked_from, hold_id, starts_at);

CREATE INDEX booking_slots_held_idx ON public.booking_slots USING btree (agent_id) WHERE (hold_id IS NOT NULL);

CREATE INDEX bookings_agent_cancelled_idx ON public.bookings USING btree (agent_id, cancelled_at) WHERE ((status)::text = 'cancelled'::text);

CREATE INDEX bookings_agent_live_until_idx ON public.bookings USING btree (agent_id, live_until) WHERE ((status)::text = 'confirmed'::text);

CREATE INDEX bookings_agent_range_idx ON public.bookings USING gist (agent_id, tstzrange(starts_at, ends_at, '[)'::text));

CREATE INDEX bookings_agent_starts_idx ON public.bookings USING btree (agent_id, starts_at, id);

CREATE INDEX bookings_hold_idx ON public.bookings USING btree (hold_id) WHERE (hold_id IS NOT NULL);

CREATE INDEX bookings_reminder_due_idx ON public.bookings USING btree (starts_at) WHERE (((status)::text = 'confirmed'::text) AND (warning_sent_at IS NULL));

CREATE INDEX calendar_feeds_agent_idx ON public.calendar_feeds USING btree (agent_id);

CREATE INDEX consistency_tokens_written_at ON public.consistency_tokens USING btree (written_at);

CREATE INDEX holds_holder_idx ON public.holds USING btree (holder_agent_id, created_at DESC, id DESC);

CREATE INDEX price_rows_pair_idx ON public.price_rows USING btree (gpu_slug, provider);

CREATE INDEX price_snapshots_taken_idx ON public.price_snapshots USING btree (taken_at);

CREATE INDEX proposals_pending_pair_idx ON public.proposals USING btree (proposer_agent_id, target_agent_id) WHERE ((status)::text = 'pending'::text);

CREATE INDEX proposals_proposer_idx ON public.proposals USING btree (proposer_agent_id, created_at);

CREATE INDEX proposals_target_idx ON public.proposals USING btree (target_agent_id, created_at);

CREATE INDEX tool_vote_days_day_idx ON public.tool_vote_days USING btree (day, tool_id, votes);

CREATE INDEX tools_category_idx ON public.tools USING btree (category_id);

CREATE INDEX tools_created_idx ON public.tools USING btree (created_at, id);

CREATE INDEX tools_source_votes_idx ON public.tools USING btree (submission_source, vote_count);

CREATE INDEX tools_votes_idx ON public.tools USING btree (vote_count, id);

CREATE INDEX votes_user_idx ON public.votes USING btree (user_id);

CREATE INDEX webhook_attempts_delivery_idx ON public.webhook_attempts USING btree (delivery_id, attempt);

CREATE INDEX webhook_deliveries_due_idx ON public.webhook_deliveries USING btree (next_attempt_at) WHERE ((status)::text = 'pending'::text);

CREATE INDEX webhook_deliveries_event_idx ON public.webhook_deliveries USING btree (event_id);

CREATE INDEX webhook_deliveries_webhook_idx ON public.webhook_deliveries USING btree (webhook_id, created_at);

CREATE INDEX webhooks_agent_idx ON public.webhooks USING btree (agent_id);

-- Sequences

create sequence booking_events_id_seq as bigint increment by 1 owned by booking_events.id;

create sequence categories_id_seq as integer increment by 1 owned by categories.id;

create sequence mikro_orm_migrations_id_seq as integer increment by 1 owned by mikro_orm_migrations.id;

create sequence price_snapshots_id_seq as bigint increment by 1 owned by price_snapshots.id;

create sequence tools_id_seq as bigint increment by 1 owned by tools.id;

create sequence webhook_attempts_id_seq as bigint increment by 1 owned by webhook_attempts.id;

-- Functions

CREATE OR REPLACE FUNCTION public.accept_proposal(p_actor uuid, p_proposal uuid, p_at timestamp with time zone)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
declare
  v_proposal proposals;
  v_source bookings;
  v_booking bookings;
  v_events jsonb;
  v_range tstzrange;
  v_refusal jsonb;
begin
  select * into v_proposal from proposals where id = p_proposal;
  if not found then return '{"missing": true}'::jsonb; end if;
  if v_proposal.target_agent_id <> p_actor then return '{"forbidden": true}'::jsonb; end if;
  perform 1 from agents where id in (v_proposal.proposer_agent_id, v_proposal.target_agent_id) order by id for no key update;
  v_range := tstzrange(v_proposal.starts_at, v_proposal.ends_at, '[)');
  if (select status from proposals where id = p_proposal) = 'pending' then
    select reason || jsonb_build_object('agentId', v_proposal.target_agent_id) into v_refusal
      from jsonb_array_elements(slot_refusals(v_proposal.proposer_agent_id, v_proposal.target_agent_id, array[v_range], p_at, null, 20)) as reason
     where reason->>'code' in ('outside_working_hours', 'notice_too_short', 'too_far_ahead')
     limit 1;
    if v_refusal is null then
      v_refusal := booking_refusal(v_proposal.proposer_agent_id, v_proposal.proposer_agent_id, array[v_range], p_at, null)
                   || jsonb_build_object('agentId', v_proposal.proposer_agent_id);
    end if;
    if v_refusal is not null then return jsonb_build_object('refused', v_refusal); end if;
  end if;
  update proposals set status = 'accepted', decided_at = p_at where id = p_proposal and status = 'pending'
  returning * into v_proposal;
  if not found then
    return jsonb_build_object('notPending', (select status from proposals where id = p_proposal));
  end if;

  -- The overlap test (blocked ranges contain their slots) lets the exclusion constraint's GiST index find the slot.
  select b.* into v_source
    from booking_slots s join bookings b on b.id = s.booking_id
   where s.agent_id = v_proposal.target_agent_id
     and tstzrange(s.blocked_from, s.blocked_until, '[)') && v_range
     and s.starts_at = v_proposal.starts_at and s.ends_at = v_proposal.ends_at and b.status = 'confirmed'
   limit 1;

  -- The proposer's expired holds in the way go whichever way the slot comes to it (moved or new).
  perform booking_purge_expired_holds(v_proposal.proposer_agent_id, array[v_range], p_at);
  if v_source.id is not null and v_source.rrule is null then
    v_booking := booking_transfer(v_source.id, v_proposal.proposer_agent_id);
  else
    if v_source.id is not null then
      -- The proposal asks for one slot: the rest of the series stays with the target.
      perform booking_exclude_occurrences(v_source.id, array[v_proposal.starts_at]);
    end if;
    v_booking := booking_insert(gen_random_uuid(), v_proposal.proposer_agent_id, v_proposal.starts_at, v_proposal.ends_at, null, '[]'::jsonb, p_at,
                                jsonb_build_array(jsonb_build_object('starts_at', v_proposal.starts_at, 'ends_at', v_proposal.ends_at)), null);
  end if;

  v_events := jsonb_build_array(record_booking_event(v_proposal.proposer_agent_id, 'booking.created', v_booking, p_at));
  if v_source.id is not null then
    v_events := v_events || jsonb_build_array(record_booking_event(v_proposal.target_agent_id, 'booking.transferred', v_booking, p_at));
  end if;
  update proposals set booking_id = v_booking.id where id = p_proposal returning * into v_proposal;
  return jsonb_build_object('proposal', to_jsonb(v_proposal), 'booking', booking_item(v_booking), 'events', v_events);
end
$function$
;

CREATE OR REPLACE FUNCTION public.add_price_snapshot(p_taken_at timestamp with time zone, p_source text, p_created_at timestamp with time zone, p_rows jsonb, p_only_if_first boolean)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
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
  perform pg_notify('price_snapshots', v_added::text);
  return v_added;
end;
$function$
;

CREATE OR REPLACE FUNCTION public.agent_credential_changed()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
begin
  perform pg_notify('agent_credentials', old.token_hash);
  return null;
end;
$function$
;

CREATE OR REPLACE FUNCTION public.agent_family_root()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
begin
  new.root_id := case when new.parent_id is null then new.id
                      else coalesce((select a.root_id from agents a where a.id = new.parent_id), new.parent_id) end;
  return new;
end;
$function$
;

CREATE OR REPLACE FUNCTION public.agent_working_ranges(p_rules availability_rules, p_from timestamp with time zone, p_to timestamp with time zone)
 RETURNS tstzmultirange
 LANGUAGE sql
 STABLE
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
  select w.ranges from common_working_ranges(array[p_rules], p_from, p_to) as w;
$function$
;

CREATE OR REPLACE FUNCTION public.agents_family_limit()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
begin
  insert into agent_families as f (root_id, members)
  select root_id, count(*) from inserted group by root_id
    on conflict (root_id) do update set members = f.members + excluded.members;
  if exists (select 1 from agent_families f where f.root_id in (select root_id from inserted) and f.members > configured_limit('gateway.agent_family_max', 10000)) then
    raise exception 'a family holds at most % agents', configured_limit('gateway.agent_family_max', 10000)
      using errcode = 'check_violation', constraint = 'agents_family_limit';
  end if;
  return null;
end;
$function$
;

CREATE OR REPLACE FUNCTION public.booking_cancel(p_booking uuid, p_owner uuid, p_at timestamp with time zone)
 RETURNS bookings
 LANGUAGE plpgsql
AS $function$
declare
  v_booking bookings;
begin
  update bookings set status = 'cancelled', cancelled_at = p_at
   where id = p_booking and agent_id = p_owner and status = 'confirmed'
  returning * into v_booking;
  if found then
    delete from booking_slots where booking_id = p_booking;
  end if;
  return v_booking;
end
$function$
;

CREATE OR REPLACE FUNCTION public.booking_cap_reached(p_agent uuid, p_cap integer, p_at timestamp with time zone)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
declare
  v_live int;
begin
  select c.live into v_live from agent_live_bookings c where c.agent_id = p_agent;
  if v_live is null or v_live >= p_cap then
    select count(*) into v_live from bookings b where b.agent_id = p_agent and b.status = 'confirmed' and b.live_until > p_at;
    insert into agent_live_bookings (agent_id, counted_after, live) values (p_agent, p_at, v_live)
      on conflict (agent_id) do update set counted_after = excluded.counted_after, live = excluded.live;
  end if;
  return v_live >= p_cap;
end
$function$
;

CREATE OR REPLACE FUNCTION public.booking_changes(p_agents uuid[], p_family_of uuid, p_family_parent uuid, p_since bigint, p_limit integer, p_family_max integer)
 RETURNS TABLE(change_kind text, event_id bigint, event_agent_id uuid, event_type text, occurred_at timestamp with time zone, booking_id uuid, current_booking jsonb, gone text)
 LANGUAGE plpgsql
AS $function$
declare
  v_members uuid[] := p_agents;
  v_locked uuid[];
  v_held boolean;
  v_busy uuid[];
  v_member uuid;
  v_through bigint;
begin
  if p_family_of is not null then
    loop
      v_members := array(select a.id from agents a where coalesce((a.id = p_family_of) or (a.parent_id = p_family_of), false) order by a.id);
      if cardinality(v_members) > p_family_max then
        return query select 'too_many'::text, cardinality(v_members)::bigint, null::uuid, null::text, null::timestamptz, null::uuid, null::jsonb, null::text;
        return;
      end if;
      exit when v_members = v_locked;
      v_held := false;
      for attempt in 1 .. 3 loop
        begin
          perform 1 from agents a where a.id = any (v_members) order by a.id for share nowait;
          v_held := true;
        exception when lock_not_available then
          null; -- the subtransaction's locks are gone with it
        end;
        exit when v_held;
        -- The members with a writer in flight: the others are locked only to find them, and let go at once.
        begin
          with free as (select a.id from agents a where a.id = any (v_members) for share skip locked)
          select array(select m.id from unnest(v_members) as m(id) where m.id <> all (array(select free.id from free))) into v_busy;
          raise sqlstate 'GW001';
        exception when sqlstate 'GW001' then
          null;
        end;
        -- Wait for each of their writers alone, holding nothing else.
        foreach v_member in array v_busy loop
          begin
            perform 1 from agents a where a.id = v_member for share;
            raise sqlstate 'GW001';
          exception when sqlstate 'GW001' then
            null;
          end;
        end loop;
      end loop;
      if not v_held then
        -- New writers kept some member busy: take the locks in order, waiting.
        perform 1 from agents a where a.id = any (v_members) order by a.id for share;
      end if;
      v_locked := v_members;
    end loop;
  end if;

  if p_since is null then
    return query
      select 'head'::text,
             greatest(coalesce(max(latest.id), 0), coalesce((select max(p.through) from booking_events_pruned p where p.agent_id = any (v_members)), 0)),
             null::uuid, null::text, null::timestamptz, null::uuid, null::jsonb, null::text
        from unnest(v_members) as member(id)
        cross join lateral (select max(e.id) as id from booking_events e where e.agent_id = member.id) latest;
    return;
  end if;

  -- Never handed out here (another installation, a restored backup behind its clients): following it
  -- would silently skip everything up to it.
  if p_since > (select s.last_value from booking_events_id_seq s) then
    return query select 'unknown_cursor'::text, p_since, null::uuid, null::text, null::timestamptz, null::uuid, null::jsonb, null::text;
    return;
  end if;
  select max(p.through) into v_through from booking_events_pruned p where p.agent_id = any (v_members) and p.through > p_since;
  if v_through is not null then
    return query select 'expired'::text, v_through, null::uuid, null::text, null::timestamptz, null::uuid, null::jsonb, null::text;
    return;
  end if;

  -- At most p_limit ids per member from its index range, then the page: bounded by members × limit
  -- however far behind the cursor is.
  return query
    with picked as (
      select next_ids.id
        from unnest(v_members) as member(id)
        cross join lateral (select e.id from booking_events e where e.agent_id = member.id and e.id > p_since order by e.id limit p_limit) next_ids
       order by next_ids.id
       limit p_limit
    )
    select 'change'::text, e.id, e.agent_id, e.type::text, e.created_at, e.booking_id,
           case when b.agent_id = e.agent_id then booking_item(b) end,
           case when b.id is null then 'removed' when b.agent_id <> e.agent_id then 'transferred' end
      from picked
      join booking_events e on e.id = picked.id
      left join bookings b on b.id = e.booking_id
     order by e.id;
end
$function$
;

CREATE OR REPLACE FUNCTION public.booking_confirm_held(p_booking uuid)
 RETURNS bookings
 LANGUAGE plpgsql
AS $function$
declare
  v_booking bookings;
begin
  update bookings set status = 'confirmed' where id = p_booking and status = 'held' returning * into v_booking;
  update booking_slots set hold_id = null where booking_id = p_booking;
  return v_booking;
end
$function$
;

CREATE OR REPLACE FUNCTION public.booking_delete_held(p_hold uuid)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
declare
  v_deleted int;
begin
  delete from bookings where hold_id = p_hold and status = 'held';
  get diagnostics v_deleted = row_count;
  return v_deleted;
end
$function$
;

CREATE OR REPLACE FUNCTION public.booking_exclude_occurrences(p_booking uuid, p_starts_at timestamp with time zone[])
 RETURNS bookings
 LANGUAGE plpgsql
AS $function$
declare
  v_booking bookings;
begin
  delete from booking_slots where booking_id = p_booking and starts_at = any(p_starts_at);
  -- An occurrence already excluded is not listed twice.
  update bookings
     set exdates = exdates || (select coalesce(jsonb_agg(distinct e.exdate), '[]'::jsonb)
                                 from (select to_char(d at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as exdate from unnest(p_starts_at) as d) e
                                where not exdates @> jsonb_build_array(e.exdate)),
         -- A series whose remaining slots are all gone stops counting against the cap.
         live_until = (select max(s.ends_at) from booking_slots s where s.booking_id = p_booking)
   where id = p_booking
  returning * into v_booking;
  return v_booking;
end
$function$
;

CREATE OR REPLACE FUNCTION public.booking_extend_series(p_booking uuid, p_candidates jsonb, p_at timestamp with time zone)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
declare
  v_agent uuid;
  v_before interval;
  v_after interval;
  v_taken timestamptz[];
  v_added int;
begin
  select agent_id into v_agent from bookings where id = p_booking;
  select coalesce(make_interval(mins => r.buffer_before_minutes), interval '0'), coalesce(make_interval(mins => r.buffer_after_minutes), interval '0')
    into v_before, v_after from (select 1) one left join availability_rules r on r.agent_id = v_agent;
  perform booking_purge_expired_holds(v_agent,
    array(select tstzrange(o.starts_at, o.ends_at, '[)') from jsonb_to_recordset(p_candidates) as o(starts_at timestamptz, ends_at timestamptz)), p_at);
  select coalesce(array_agg(distinct o.starts_at), '{}') into v_taken
    from jsonb_to_recordset(p_candidates) as o(starts_at timestamptz, ends_at timestamptz)
   where exists (select 1 from booking_slots s
                  where s.agent_id = v_agent
                    and tstzrange(s.blocked_from, s.blocked_until, '[)') && tstzrange(o.starts_at - v_before, o.ends_at + v_after, '[)'));
  if cardinality(v_taken) > 0 then
    perform booking_exclude_occurrences(p_booking, v_taken);
  end if;
  insert into booking_slots (booking_id, agent_id, starts_at, ends_at, blocked_from, blocked_until)
  select p_booking, v_agent, o.starts_at, o.ends_at, o.starts_at - v_before, o.ends_at + v_after
    from jsonb_to_recordset(p_candidates) as o(starts_at timestamptz, ends_at timestamptz)
   where o.starts_at <> all(v_taken);
  get diagnostics v_added = row_count;
  -- The series counts against the cap as long as its materialised slots reach.
  update bookings set live_until = (select max(s.ends_at) from booking_slots s where s.booking_id = p_booking) where id = p_booking;
  return jsonb_build_object('added', v_added, 'skipped', cardinality(v_taken));
end
$function$
;

CREATE OR REPLACE FUNCTION public.booking_insert(p_id uuid, p_agent uuid, p_starts_at timestamp with time zone, p_ends_at timestamp with time zone, p_rrule text, p_exdates jsonb, p_created_at timestamp with time zone, p_slots jsonb, p_hold uuid)
 RETURNS bookings
 LANGUAGE plpgsql
AS $function$
declare
  v_booking bookings;
  v_before interval;
  v_after interval;
begin
  select make_interval(mins => r.buffer_before_minutes), make_interval(mins => r.buffer_after_minutes)
    into v_before, v_after from availability_rules r where r.agent_id = p_agent;
  insert into bookings (id, agent_id, starts_at, ends_at, status, rrule, exdates, created_at, live_until, hold_id)
  values (p_id, p_agent, p_starts_at, p_ends_at, case when p_hold is null then 'confirmed' else 'held' end, p_rrule, p_exdates, p_created_at,
          (select max(s.ends_at) from jsonb_to_recordset(p_slots) as s(starts_at timestamptz, ends_at timestamptz)), p_hold)
  returning * into v_booking;
  insert into booking_slots (booking_id, agent_id, starts_at, ends_at, blocked_from, blocked_until, hold_id)
  select p_id, p_agent, s.starts_at, s.ends_at, s.starts_at - coalesce(v_before, interval '0'), s.ends_at + coalesce(v_after, interval '0'), p_hold
    from jsonb_to_recordset(p_slots) as s(starts_at timestamptz, ends_at timestamptz);
  return v_booking;
end
$function$
;

CREATE OR REPLACE FUNCTION public.booking_item(b bookings)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  select jsonb_build_object('id', b.id, 'agentId', b.agent_id, 'startsAt', iso_instant(b.starts_at), 'endsAt', iso_instant(b.ends_at), 'status', b.status, 'rrule', b.rrule, 'warningSentAt', iso_instant(b.warning_sent_at), 'createdAt', iso_instant(b.created_at), 'version', b.version);
$function$
;

CREATE OR REPLACE FUNCTION public.booking_mark_reminded(p_booking uuid, p_at timestamp with time zone)
 RETURNS bookings
 LANGUAGE plpgsql
AS $function$
declare
  v_booking bookings;
begin
  update bookings set warning_sent_at = p_at
   where id = p_booking and status = 'confirmed' and warning_sent_at is null and starts_at > p_at
  returning * into v_booking;
  return v_booking;
end
$function$
;

CREATE OR REPLACE FUNCTION public.booking_move(p_booking uuid, p_starts_at timestamp with time zone, p_ends_at timestamp with time zone, p_rrule text, p_exdates jsonb, p_slots jsonb)
 RETURNS bookings
 LANGUAGE plpgsql
AS $function$
declare
  v_booking bookings;
  v_before interval;
  v_after interval;
begin
  select coalesce(make_interval(mins => r.buffer_before_minutes), interval '0'), coalesce(make_interval(mins => r.buffer_after_minutes), interval '0')
    into v_before, v_after
    from bookings b left join availability_rules r on r.agent_id = b.agent_id where b.id = p_booking;
  delete from booking_slots where booking_id = p_booking;
  update bookings
     set starts_at = p_starts_at, ends_at = p_ends_at, rrule = p_rrule, exdates = p_exdates,
         live_until = (select max(s.ends_at) from jsonb_to_recordset(p_slots) as s(starts_at timestamptz, ends_at timestamptz))
   where id = p_booking
  returning * into v_booking;
  insert into booking_slots (booking_id, agent_id, starts_at, ends_at, blocked_from, blocked_until)
  select p_booking, v_booking.agent_id, s.starts_at, s.ends_at, s.starts_at - v_before, s.ends_at + v_after
    from jsonb_to_recordset(p_slots) as s(starts_at timestamptz, ends_at timestamptz);
  return v_booking;
end
$function$
;

CREATE OR REPLACE FUNCTION public.booking_purge_expired_holds(p_agent uuid, p_slots tstzrange[], p_at timestamp with time zone)
 RETURNS integer
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  v_before interval := interval '0';
  v_after interval := interval '0';
  v_purged int;
begin
  -- Most agents hold nothing: their held slots, none, answer before the buffers and the probe of every slot.
  perform 1 from booking_slots s where s.agent_id = p_agent and s.hold_id is not null limit 1;
  if not found then
    return 0;
  end if;
  select make_interval(mins => r.buffer_before_minutes), make_interval(mins => r.buffer_after_minutes)
    into v_before, v_after from availability_rules r where r.agent_id = p_agent;
  delete from bookings b
   where b.id in (select s.booking_id from unnest(p_slots) as slot(r)
                    join booking_slots s on s.agent_id = p_agent
                                        and tstzrange(s.blocked_from, s.blocked_until, '[)')
                                            && tstzrange(lower(slot.r) - coalesce(v_before, interval '0'), upper(slot.r) + coalesce(v_after, interval '0'), '[)')
                    join holds h on h.id = s.hold_id
                   where s.hold_id is not null and h.expires_at <= p_at)
     and b.status = 'held';
  get diagnostics v_purged = row_count;
  return v_purged;
end
$function$
;

CREATE OR REPLACE FUNCTION public.booking_refusal(p_caller uuid, p_agent uuid, p_slots tstzrange[], p_at timestamp with time zone, p_ignore uuid)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
AS $function$
declare
  r availability_rules;
begin
  select * into r from availability_rules where agent_id = p_agent;
  if r.agent_id is null or slot_admitted(p_caller, r, p_slots, p_at, p_ignore) then return null; end if;
  return slot_refusals(p_caller, p_agent, p_slots, p_at, p_ignore, 1) -> 0;
end
$function$
;

CREATE OR REPLACE FUNCTION public.booking_transfer(p_booking uuid, p_to uuid)
 RETURNS bookings
 LANGUAGE plpgsql
AS $function$
declare
  v_booking bookings;
  v_before interval;
  v_after interval;
begin
  select make_interval(mins => r.buffer_before_minutes), make_interval(mins => r.buffer_after_minutes)
    into v_before, v_after from availability_rules r where r.agent_id = p_to;
  update bookings set agent_id = p_to where id = p_booking returning * into v_booking;
  update booking_slots
     set agent_id = p_to, blocked_from = starts_at - coalesce(v_before, interval '0'), blocked_until = ends_at + coalesce(v_after, interval '0')
   where booking_id = p_booking;
  return v_booking;
end
$function$
;

CREATE OR REPLACE FUNCTION public.booking_version()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
begin
  new.version := old.version + 1;
  return new;
end;
$function$
;

CREATE OR REPLACE FUNCTION public.calendar_feeds_per_agent_limit()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
begin
  perform 1 from agents where id = new.agent_id for no key update;
  if (select count(*) from calendar_feeds where agent_id = new.agent_id) >= 10 then
    raise exception 'an agent has at most 10 calendar feeds'
      using errcode = 'check_violation', constraint = 'calendar_feeds_per_agent_limit';
  end if;
  return new;
end;
$function$
;

CREATE OR REPLACE FUNCTION public.cancel_booking(p_agent uuid, p_booking uuid, p_at timestamp with time zone)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
declare
  v_booking bookings;
begin
  perform 1 from agents where id = p_agent for no key update;
  v_booking := booking_cancel(p_booking, p_agent, p_at);
  if v_booking.id is null then
    select * into v_booking from bookings where id = p_booking;
    if not found then return '{"missing": true}'::jsonb; end if;
    if v_booking.agent_id <> p_agent then return '{"forbidden": true}'::jsonb; end if;
    return jsonb_build_object('booking', booking_item(v_booking));
  end if;
  return jsonb_build_object('booking', booking_item(v_booking),
                            'events', jsonb_build_array(record_booking_event(p_agent, 'booking.cancelled', v_booking, p_at)));
end
$function$
;

CREATE OR REPLACE FUNCTION public.claim_webhook_deliveries(p_now timestamp with time zone, p_lease_until timestamp with time zone, p_limit integer, p_only uuid, p_in_flight uuid[], p_busy_webhooks uuid[], p_per_webhook integer)
 RETURNS TABLE(id uuid, attempts integer, webhook_id uuid, url text, secret text, webhook_disabled boolean, event_id bigint, event_type text, event_created_at timestamp with time zone, booking jsonb, previous jsonb, previous_event_id bigint, queued boolean)
 LANGUAGE sql
 SET plan_cache_mode TO 'force_custom_plan'
 SET enable_bitmapscan TO 'off'
AS $function$
  select set_config('synchronous_commit', 'off', true);
  with candidates as (
    select c.id, c.next_attempt_at, row_number() over (partition by c.webhook_id order by c.next_attempt_at, c.id) as place
      from (select d.id, d.webhook_id, d.next_attempt_at from webhook_deliveries d
             where d.status = 'pending' and d.next_attempt_at <= p_now and (p_only is null or d.id = p_only)
               and d.id <> all (p_in_flight) and d.webhook_id <> all (p_busy_webhooks)
             order by d.next_attempt_at
             limit p_limit * 8) c
  ), reserved as (
    -- A quarter of the places (one of two to four, none of one) is kept for queued events while any wait: new
    -- events never queue behind a backlog of retries, nor retries behind a burst.
    select case when p_only is null and exists (select 1 from webhook_fanout q where q.leased_until is null or q.leased_until <= p_now)
                then least((p_limit + 3) / 4, p_limit - 1) else 0 end as n
  ), due as (
    select d.id from webhook_deliveries d
     where d.id = any (array(select c.id from candidates c where c.place <= p_per_webhook order by c.next_attempt_at
                              limit p_limit - (select n from reserved)))
       -- Re-checked on the newest version of a row another claim leased meanwhile.
       and d.status = 'pending' and d.next_attempt_at <= p_now
     for update of d skip locked
  ), leased as (
    update webhook_deliveries d set next_attempt_at = p_lease_until from due where d.id = due.id
    returning d.id, d.attempts, d.webhook_id, d.event_id
  ), places as (
    select greatest(p_limit - (select count(*) from due), 0) as n
  ), needed as (
    -- How many events fill the places left (each brings about `deliveries`), judged on the oldest claimable ones
    -- without locking them: only that many are locked next.
    select count(*) as n from (
      select sum(q.deliveries) over (order by q.event_id) - q.deliveries as before_event
        from (select q.event_id, q.deliveries from webhook_fanout q
               where p_only is null and (q.leased_until is null or q.leased_until <= p_now)
               order by q.event_id limit (select n from places)) q
    ) c
     where c.before_event < (select n from places)
  ), queued as (
    -- Locked before the limit, so that claims at once take different events; those that start within the places
    -- left are taken.
    select c.event_id, c.claimed_before from (
      select q.event_id, q.claimed_before, sum(q.deliveries) over (order by q.event_id) - q.deliveries as before_event
        from (select q.event_id, q.deliveries, q.leased_until is not null as claimed_before from webhook_fanout q
               where p_only is null and (q.leased_until is null or q.leased_until <= p_now)
               order by q.event_id limit (select n from needed)
                 for update skip locked) q
    ) c
     where c.before_event < (select n from places)
  ), expansion as (
    select e.id as event_id, e.created_at as event_created_at, w.id as webhook_id, webhook_delivery_id(e.id, w.id) as delivery_id,
           t.claimed_before, row_number() over (partition by w.id order by e.id) as place
      from queued t
      join booking_events e on e.id = t.event_id
      join webhooks w on w.agent_id = e.agent_id and webhook_takes_event(w, e)
  ), taken as (
    select x.*,
           -- An endpoint's places in this claim go first to its waiting deliveries.
           x.webhook_id = any (p_busy_webhooks) or x.place + (select count(*) from leased l where l.webhook_id = x.webhook_id) > p_per_webhook as parked
      from expansion x
     -- Claimed before (its process died, or a batch of its outcomes failed): only the endpoints without a delivery,
     -- and never one still in flight here after a lapsed lease.
     where not x.claimed_before
        or (x.delivery_id <> all (p_in_flight) and not exists (select 1 from webhook_deliveries d where d.id = x.delivery_id))
  ), emptied as (
    -- Nothing left to send here: every endpoint has its delivery (recorded before, or waiting from this claim on),
    -- or is gone, and none is still in flight.
    delete from webhook_fanout f
     where f.event_id = any (array(select t.event_id from queued t
                                    where not exists (select 1 from taken x where x.event_id = t.event_id and not x.parked)
                                      and not exists (select 1 from expansion x where x.event_id = t.event_id and x.delivery_id = any (p_in_flight))))
  ), held as (
    update webhook_fanout f set leased_until = p_lease_until where f.event_id = any (array(select distinct t.event_id from taken t where not t.parked))
  ), waiting as (
    insert into webhook_deliveries (id, webhook_id, event_id, status, attempts, next_attempt_at, created_at)
    select t.delivery_id, t.webhook_id, t.event_id, 'pending', 0, t.event_created_at, t.event_created_at from taken t where t.parked
    on conflict (id) do nothing
  ), answer as (
    select l.id, l.attempts, l.webhook_id, l.event_id, false as queued from leased l
    union all
    select t.delivery_id, 0, t.webhook_id, t.event_id, true from taken t where not t.parked
  )
  select a.id, a.attempts, w.id, w.url, w.secret, w.disabled_at is not null, e.id, e.type, e.created_at, e.booking, e.previous,
         (select max(p.id) from booking_events p
           where p.agent_id = e.agent_id and p.id < e.id and p.type = any (w.events) and p.created_at >= w.created_at),
         a.queued
    from answer a join webhooks w on w.id = a.webhook_id join booking_events e on e.id = a.event_id;
$function$
;

CREATE OR REPLACE FUNCTION public.common_working_ranges(p_rules availability_rules[], p_from timestamp with time zone, p_to timestamp with time zone)
 RETURNS TABLE(ranges tstzmultirange)
 LANGUAGE sql
 STABLE
AS $function$
  select range_intersect_agg(per_zone.ranges)
    from (select distinct rules.time_zone from unnest(p_rules) as rules) as zone_of
   cross join lateral (
     -- The window's local dates in the zone; its offset at each local midnight from the day before the first to the
     -- one after the day after the last (local midnights read as UTC instants, as the offsets below compare them); the
     -- instants of the changes between them.
     select window_days.first_day, window_days.last_day, timezone('UTC', window_days.first_day::timestamp) as first_midnight, midnight.offsets,
            array(select zone_offset_change(zone_of.time_zone, timezone('UTC', k.at), timezone('UTC', k.at + interval '1 day'))
                    from generate_series(window_days.first_day::timestamp - interval '1 day', window_days.last_day::timestamp + interval '1 day', interval '1 day')
                         with ordinality as k(at, n)
                   where midnight.offsets[k.n] <> midnight.offsets[k.n + 1]) as changes
       from (select (p_from at time zone zone_of.time_zone)::date as first_day, (p_to at time zone zone_of.time_zone)::date as last_day) window_days
      cross join lateral (
        select array(select timezone(zone_of.time_zone, timezone('UTC', m.at)) - m.at
                       from generate_series(window_days.first_day::timestamp - interval '1 day', window_days.last_day::timestamp + interval '2 days',
                                            interval '1 day') as m(at)) as offsets
         offset 0
      ) midnight
      offset 0
   ) zone
   cross join lateral (
     select coalesce((
       with weekly as materialized (
         -- Each ISO weekday's hours common to the zone's agents (no weekly hours: the whole day).
         select w.isodow::int as isodow, range_intersect_agg(coalesce(w.hours, '{[0,1440)}'::int4multirange)) as hours
           from unnest(p_rules) as rules
          cross join lateral unnest(coalesce(rules.weekly_hours, array_fill(null::int4multirange, array[7]))) with ordinality as w(hours, isodow)
          where rules.time_zone = zone_of.time_zone
          group by w.isodow
       ), overridden as materialized (
         -- The window's dates some agent of the zone overrides, and each agent's hours that date, intersected.
         select overridden_on.on_date,
                range_intersect_agg(coalesce(o.hours, rules.weekly_hours[extract(isodow from overridden_on.on_date)::int], '{[0,1440)}'::int4multirange)) as hours
           from (select distinct o.on_date
                   from unnest(p_rules) as rules
                   join availability_overrides o on o.agent_id = rules.agent_id and o.on_date between zone.first_day and zone.last_day
                  where rules.time_zone = zone_of.time_zone) overridden_on
          cross join unnest(p_rules) as rules
           left join availability_overrides o on o.agent_id = rules.agent_id and o.on_date = overridden_on.on_date
          where rules.time_zone = zone_of.time_zone
          group by overridden_on.on_date
       )
       select range_agg(
                case when local.offset_before = local.offset_after
                     then tstzmultirange(tstzrange(local.starts - local.offset_before, local.ends - local.offset_before, '[)'))
                     else tstzmultirange(tstzrange(local.starts - local.offset_before, local.ends - local.offset_before, '[)') * tstzrange(null, local.change, '[)'))
                        + tstzmultirange(tstzrange(local.starts - local.offset_after, local.ends - local.offset_after, '[)') * tstzrange(local.change, null, '[)')) end)
         from (
           -- n: the date's place in the window (0 for the first).
           select d.n, coalesce(overridden.hours, weekly.hours) as hours
             from generate_series(0, zone.last_day - zone.first_day) as d(n)
             join weekly on weekly.isodow = extract(isodow from zone.first_day + d.n)::int
             left join overridden on overridden.on_date = zone.first_day + d.n
         ) day_hours
        cross join lateral unnest(day_hours.hours) as h(minutes)
        cross join lateral (
          -- The interval's wall-clock times read as UTC instants (plain arithmetic from the first midnight's: a day is
          -- 24 hours there), the offsets at the midnights beginning the day before and ending the day after, and (only
          -- read when they differ) the change between them.
          select zone.first_midnight + make_interval(hours => 24 * day_hours.n, mins => lower(h.minutes)) as starts,
                 zone.first_midnight + make_interval(hours => 24 * day_hours.n, mins => upper(h.minutes)) as ends,
                 zone.offsets[day_hours.n + 1] as offset_before,
                 zone.offsets[day_hours.n + 4] as offset_after,
                 (select c from unnest(zone.changes) as c
                   where c > zone.first_midnight + make_interval(hours => 24 * (day_hours.n - 1))
                     and c <= zone.first_midnight + make_interval(hours => 24 * (day_hours.n + 2))
                   limit 1) as change
        ) local
     ), '{}'::tstzmultirange) * tstzmultirange(tstzrange(p_from, p_to, '[)')) as ranges
   ) per_zone;
$function$
;

CREATE OR REPLACE FUNCTION public.configured_limit(p_setting text, p_default integer)
 RETURNS integer
 LANGUAGE sql
 STABLE
AS $function$
  select coalesce(nullif(current_setting(p_setting, true), '')::int, p_default)
$function$
;

CREATE OR REPLACE FUNCTION public.count_day_slots()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
declare
  v_zone text;
begin
  if tg_op <> 'INSERT' then
    select r.time_zone into v_zone from availability_rules r where r.agent_id = old.agent_id;
    if v_zone is not null then
      update agent_day_slots
         set booked = booked - (old.hold_id is null)::int, held = held - (old.hold_id is not null)::int
       where agent_id = old.agent_id and on_date = (old.starts_at at time zone v_zone)::date;
    end if;
  end if;
  if tg_op <> 'DELETE' then
    select r.time_zone into v_zone from availability_rules r where r.agent_id = new.agent_id;
    if v_zone is not null then
      insert into agent_day_slots as c (agent_id, on_date, booked, held)
      values (new.agent_id, (new.starts_at at time zone v_zone)::date, (new.hold_id is null)::int, (new.hold_id is not null)::int)
      on conflict (agent_id, on_date) do update set booked = c.booked + excluded.booked, held = c.held + excluded.held;
    end if;
  end if;
  return null;
end;
$function$
;

CREATE OR REPLACE FUNCTION public.count_day_slots_afresh()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
begin
  perform 1 from agents where id = new.agent_id for no key update;
  delete from agent_day_slots where agent_id = new.agent_id;
  insert into agent_day_slots (agent_id, on_date, booked, held)
  select s.agent_id, (s.starts_at at time zone new.time_zone)::date,
         count(*) filter (where s.hold_id is null), count(*) filter (where s.hold_id is not null)
    from booking_slots s
   where s.agent_id = new.agent_id
   group by 1, 2;
  return null;
end;
$function$
;

CREATE OR REPLACE FUNCTION public.count_live_bookings()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
begin
  if tg_op <> 'INSERT' and old.status = 'confirmed' then
    update agent_live_bookings set live = live - 1 where agent_id = old.agent_id and old.live_until > counted_after;
  end if;
  if tg_op <> 'DELETE' and new.status = 'confirmed' then
    update agent_live_bookings set live = live + 1 where agent_id = new.agent_id and new.live_until > counted_after;
  end if;
  return null;
end;
$function$
;

CREATE OR REPLACE FUNCTION public.create_booking(p_agent uuid, p_starts_at timestamp with time zone, p_ends_at timestamp with time zone, p_rrule text, p_slots jsonb, p_cap integer, p_key text, p_request_hash text, p_key_valid_after timestamp with time zone, p_at timestamp with time zone)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
declare
  v_stored jsonb;
  v_refusal jsonb;
  v_booking bookings;
  v_item jsonb;
  v_ranges tstzrange[] := array(select tstzrange(s.starts_at, s.ends_at, '[)') from jsonb_to_recordset(p_slots) as s(starts_at timestamptz, ends_at timestamptz));
begin
  perform 1 from agents where id = p_agent for no key update;
  if p_key is not null then
    v_stored := idempotency_lookup(p_agent, 'create_booking', p_key, p_request_hash, p_key_valid_after);
    if v_stored is not null then return v_stored; end if;
  end if;
  if booking_cap_reached(p_agent, p_cap, p_at) then return '{"capReached": true}'::jsonb; end if;
  v_refusal := booking_refusal(p_agent, p_agent, v_ranges, p_at, null);
  if v_refusal is not null then return jsonb_build_object('refused', v_refusal); end if;

  perform booking_purge_expired_holds(p_agent, v_ranges, p_at);
  v_booking := booking_insert(gen_random_uuid(), p_agent, p_starts_at, p_ends_at, p_rrule, '[]'::jsonb, p_at, p_slots, null);
  v_item := booking_item(v_booking);
  if p_key is not null then
    perform idempotency_record(p_agent, 'create_booking', p_key, p_request_hash, jsonb_build_object('ok', v_item), p_at, p_key_valid_after);
  end if;
  return jsonb_build_object('booking', v_item, 'events', jsonb_build_array(record_booking_event(p_agent, 'booking.created', v_booking, p_at)));
end
$function$
;

CREATE OR REPLACE FUNCTION public.create_group_booking(p_actor uuid, p_agents uuid[], p_starts timestamp with time zone, p_ends timestamp with time zone, p_cap integer, p_key text, p_request_hash text, p_key_valid_after timestamp with time zone, p_at timestamp with time zone)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
declare
  v_agents uuid[] := array(select distinct a from unnest(p_agents) as a order by a);
  v_stored jsonb;
  v_refused uuid[];
  v_agent uuid;
  v_refusal jsonb;
  v_booking bookings;
  v_slots jsonb := jsonb_build_array(jsonb_build_object('starts_at', p_starts, 'ends_at', p_ends));
  v_items jsonb := '[]'::jsonb;
  v_events jsonb := '[]'::jsonb;
begin
  perform 1 from agents where id = any(v_agents || p_actor) order by id for no key update;
  if p_key is not null then
    v_stored := idempotency_lookup(p_actor, 'create_group_booking', p_key, p_request_hash, p_key_valid_after);
    if v_stored is not null then return v_stored; end if;
  end if;
  select array_agg(asked.id order by asked.id) into v_refused
    from unnest(v_agents) as asked(id) left join agents a on a.id = asked.id
   where a.id is null or not coalesce((a.id = p_actor) or (a.parent_id = p_actor), false);
  if v_refused is not null then return jsonb_build_object('forbidden', v_refused); end if;
  foreach v_agent in array v_agents loop
    if booking_cap_reached(v_agent, p_cap, p_at) then return jsonb_build_object('capReached', v_agent); end if;
    v_refusal := booking_refusal(p_actor, v_agent, array[tstzrange(p_starts, p_ends, '[)')], p_at, null);
    if v_refusal is not null then return jsonb_build_object('refused', v_refusal || jsonb_build_object('agentId', v_agent)); end if;
  end loop;
  foreach v_agent in array v_agents loop
    perform booking_purge_expired_holds(v_agent, array[tstzrange(p_starts, p_ends, '[)')], p_at);
    v_booking := booking_insert(gen_random_uuid(), v_agent, p_starts, p_ends, null, '[]'::jsonb, p_at, v_slots, null);
    v_items := v_items || jsonb_build_array(booking_item(v_booking));
    v_events := v_events || jsonb_build_array(record_booking_event(v_agent, 'booking.created', v_booking, p_at));
  end loop;
  if p_key is not null then
    perform idempotency_record(p_actor, 'create_group_booking', p_key, p_request_hash, jsonb_build_object('ok', v_items), p_at, p_key_valid_after);
  end if;
  return jsonb_build_object('bookings', v_items, 'events', v_events);
end
$function$
;

CREATE OR REPLACE FUNCTION public.hold_confirm(p_actor uuid, p_hold uuid, p_cap integer, p_at timestamp with time zone)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
declare
  v_hold holds;
  v_held bookings;
  v_booking bookings;
  v_refusal jsonb;
  v_items jsonb := '[]'::jsonb;
  v_events jsonb := '[]'::jsonb;
begin
  select * into v_hold from holds where id = p_hold;
  if not found then return '{"missing": true}'::jsonb; end if;
  if v_hold.holder_agent_id <> p_actor then return '{"forbidden": true}'::jsonb; end if;
  perform 1 from agents where id = any(v_hold.agent_ids || v_hold.holder_agent_id) order by id for no key update;
  select * into v_hold from holds where id = p_hold;
  if v_hold.confirmed_at is not null then
    return jsonb_build_object('hold', hold_item(p_hold, p_at),
                              'bookings', (select jsonb_agg(booking_item(b) order by b.agent_id) from bookings b where b.hold_id = p_hold));
  end if;
  if v_hold.released_at is not null then return '{"refused": {"code": "hold_released"}}'::jsonb; end if;
  if v_hold.expires_at <= p_at
     or (select count(*) from bookings b where b.hold_id = p_hold and b.status = 'held') < cardinality(v_hold.agent_ids) then
    return jsonb_build_object('refused', jsonb_build_object('code', 'hold_expired', 'expiresAt', iso_instant(v_hold.expires_at)));
  end if;
  for v_held in select * from bookings b where b.hold_id = p_hold order by b.agent_id loop
    if booking_cap_reached(v_held.agent_id, p_cap, p_at) then return jsonb_build_object('capReached', v_held.agent_id); end if;
    select reason || jsonb_build_object('agentId', v_held.agent_id) into v_refusal
      from jsonb_array_elements(slot_refusals(p_actor, v_held.agent_id, array[tstzrange(v_held.starts_at, v_held.ends_at, '[)')], p_at, v_held.id, 20)) as reason
     where reason->>'code' in ('daily_limit_reached', 'weekly_limit_reached')
     limit 1;
    if v_refusal is not null then return jsonb_build_object('refused', v_refusal); end if;
  end loop;
  for v_held in select * from bookings b where b.hold_id = p_hold order by b.agent_id loop
    v_booking := booking_confirm_held(v_held.id);
    v_items := v_items || jsonb_build_array(booking_item(v_booking));
    v_events := v_events || jsonb_build_array(record_booking_event(v_booking.agent_id, 'booking.created', v_booking, p_at));
  end loop;
  update holds set confirmed_at = p_at where id = p_hold;
  return jsonb_build_object('hold', hold_item(p_hold, p_at), 'bookings', v_items, 'events', v_events);
end
$function$
;

CREATE OR REPLACE FUNCTION public.hold_create(p_actor uuid, p_hold uuid, p_agents uuid[], p_starts timestamp with time zone, p_ends timestamp with time zone, p_expires timestamp with time zone, p_cap integer, p_max_live integer, p_at timestamp with time zone)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
declare
  v_agents uuid[] := array(select distinct a from unnest(p_agents) as a order by a);
  v_refused uuid[];
  v_agent uuid;
  v_refusal jsonb;
  v_slots jsonb := jsonb_build_array(jsonb_build_object('starts_at', p_starts, 'ends_at', p_ends));
begin
  perform 1 from agents where id = any(v_agents || p_actor) order by id for no key update;
  select array_agg(asked.id order by asked.id) into v_refused
    from unnest(v_agents) as asked(id) left join agents a on a.id = asked.id
   where a.id is null or not coalesce((a.id = p_actor) or (a.parent_id = p_actor), false);
  if v_refused is not null then return jsonb_build_object('forbidden', v_refused); end if;
  if (select count(*) from holds h
       where h.holder_agent_id = p_actor and h.expires_at > p_at and h.confirmed_at is null and h.released_at is null) >= p_max_live then
    return '{"limitExceeded": true}'::jsonb;
  end if;
  foreach v_agent in array v_agents loop
    if booking_cap_reached(v_agent, p_cap, p_at) then return jsonb_build_object('capReached', v_agent); end if;
    v_refusal := booking_refusal(p_actor, v_agent, array[tstzrange(p_starts, p_ends, '[)')], p_at, null);
    if v_refusal is not null then return jsonb_build_object('refused', v_refusal || jsonb_build_object('agentId', v_agent)); end if;
  end loop;
  insert into holds (id, holder_agent_id, agent_ids, starts_at, ends_at, expires_at, created_at)
  values (p_hold, p_actor, v_agents, p_starts, p_ends, p_expires, p_at);
  foreach v_agent in array v_agents loop
    perform booking_purge_expired_holds(v_agent, array[tstzrange(p_starts, p_ends, '[)')], p_at);
    perform booking_insert(gen_random_uuid(), v_agent, p_starts, p_ends, null, '[]'::jsonb, p_at, v_slots, p_hold);
  end loop;
  return jsonb_build_object('hold', hold_item(p_hold, p_at));
end
$function$
;

CREATE OR REPLACE FUNCTION public.hold_item(p_hold uuid, p_at timestamp with time zone)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  select jsonb_build_object(
           'id', h.id, 'holderAgentId', h.holder_agent_id,
           'startsAt', iso_instant(h.starts_at), 'endsAt', iso_instant(h.ends_at),
           'expiresAt', iso_instant(h.expires_at), 'createdAt', iso_instant(h.created_at),
           'status', case when h.confirmed_at is not null then 'confirmed' when h.released_at is not null then 'released'
                          when h.expires_at <= p_at then 'expired' else 'held' end,
           'calendars', (select jsonb_agg(jsonb_build_object('agentId', calendar.agent_id,
                                                             'bookingId', (select b.id from bookings b where b.hold_id = h.id and b.agent_id = calendar.agent_id))
                                          order by calendar.agent_id)
                           from unnest(h.agent_ids) as calendar(agent_id)))
    from holds h where h.id = p_hold;
$function$
;

CREATE OR REPLACE FUNCTION public.hold_release(p_actor uuid, p_hold uuid, p_at timestamp with time zone)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
declare
  v_hold holds;
begin
  select * into v_hold from holds where id = p_hold;
  if not found then return '{"missing": true}'::jsonb; end if;
  if v_hold.holder_agent_id <> p_actor then return '{"forbidden": true}'::jsonb; end if;
  perform 1 from agents where id = any(v_hold.agent_ids || v_hold.holder_agent_id) order by id for no key update;
  select * into v_hold from holds where id = p_hold;
  if v_hold.confirmed_at is not null then return '{"confirmed": true}'::jsonb; end if;
  if v_hold.released_at is null then
    update holds set released_at = p_at where id = p_hold;
    perform booking_delete_held(p_hold);
  end if;
  return jsonb_build_object('hold', hold_item(p_hold, p_at));
end
$function$
;

CREATE OR REPLACE FUNCTION public.idempotency_lookup(p_agent uuid, p_operation text, p_key text, p_request_hash text, p_valid_after timestamp with time zone)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  select case when k.request_hash <> p_request_hash then '{"conflict": true}'::jsonb else jsonb_build_object('replay', k.outcome) end
    from idempotency_keys k
   where k.agent_id = p_agent and k.operation = p_operation and k.key = p_key and k.created_at >= p_valid_after;
$function$
;

CREATE OR REPLACE FUNCTION public.idempotency_record(p_agent uuid, p_operation text, p_key text, p_request_hash text, p_outcome jsonb, p_at timestamp with time zone, p_valid_after timestamp with time zone)
 RETURNS void
 LANGUAGE sql
AS $function$
  insert into idempotency_keys (agent_id, operation, key, request_hash, outcome, created_at)
  values (p_agent, p_operation, p_key, p_request_hash, p_outcome, p_at)
  on conflict (agent_id, operation, key) do update
    set request_hash = excluded.request_hash, outcome = excluded.outcome, created_at = excluded.created_at
    where idempotency_keys.created_at < p_valid_after;
$function$
;

CREATE OR REPLACE FUNCTION public.iso_instant(p_at timestamp with time zone)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
  select to_char(p_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
$function$
;

CREATE OR REPLACE FUNCTION public.proposals_pending_per_target_limit()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
begin
  if new.status = 'pending' then
    perform 1 from agents where id = new.proposer_agent_id for no key update;
    if (select count(*) from (
          select 1 from proposals p
           where p.proposer_agent_id = new.proposer_agent_id and p.target_agent_id = new.target_agent_id and p.status = 'pending'
           limit configured_limit('gateway.pending_proposals_max', 50)) pending) >= configured_limit('gateway.pending_proposals_max', 50) then
      raise exception 'at most % pending proposals from one agent to one target', configured_limit('gateway.pending_proposals_max', 50)
        using errcode = 'check_violation', constraint = 'proposals_pending_per_target_limit';
    end if;
  end if;
  return new;
end;
$function$
;

CREATE OR REPLACE FUNCTION public.prune_booking_events(p_before timestamp with time zone, p_after bigint, p_batch integer, p_at timestamp with time zone, OUT deleted integer, OUT read_through bigint, OUT done boolean)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
begin
  with oldest as (
    select e.id, e.created_at < p_before as old from booking_events e where e.id > p_after order by e.id limit p_batch
  ), doomed as (
    select oldest.id from oldest
     where oldest.old
       and not exists (select 1 from webhook_deliveries d where d.event_id = oldest.id and d.status = 'pending')
       and not exists (select 1 from webhook_fanout f where f.event_id = oldest.id)
  ), removed as (
    delete from booking_events e using doomed where e.id = doomed.id
    returning e.id, e.agent_id
  ), recorded as (
    insert into booking_events_pruned as kept (agent_id, through, pruned_at)
    select removed.agent_id, max(removed.id), p_at from removed group by removed.agent_id
    on conflict (agent_id) do update set through = greatest(kept.through, excluded.through), pruned_at = excluded.pruned_at
  )
  select (select count(*)::int from removed),
         (select max(oldest.id) from oldest),
         (select count(*) < p_batch or bool_or(not oldest.old) from oldest)
    into deleted, read_through, done;
  read_through := coalesce(read_through, p_after);
end
$function$
;

CREATE OR REPLACE FUNCTION public.record_booking_event(p_agent uuid, p_type text, p_booking bookings, p_at timestamp with time zone, p_previous jsonb DEFAULT NULL::jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
declare
  v_event_id bigint;
  v_previous bigint;
  v_deliveries int;
begin
  -- The agent's row lock, held from before the cursor is taken until commit, makes one agent's
  -- cursors commit in order (a no-op when the caller holds it already). Other agents never wait.
  perform 1 from agents where id = p_agent for no key update;
  select max(e.id) into v_previous from booking_events e where e.agent_id = p_agent;
  insert into booking_events (agent_id, type, booking_id, booking, previous, created_at)
    values (p_agent, p_type, p_booking.id, booking_item(p_booking), p_previous, p_at)
    returning id into v_event_id;
  -- How many deliveries it brings sizes the dispatcher's claims.
  insert into webhook_fanout (event_id, deliveries)
  select v_event_id, n from (select count(*)::int as n from webhooks w where w.agent_id = p_agent and w.disabled_at is null and p_type = any (w.events)) c
   where n > 0;
  get diagnostics v_deliveries = row_count;
  return jsonb_build_object('eventId', v_event_id::text, 'previousEventId', v_previous::text, 'agentId', p_agent, 'type', p_type,
                            'deliveries', v_deliveries);
end
$function$
;

CREATE OR REPLACE FUNCTION public.record_webhook_attempts(p_attempts jsonb, p_disable_after integer)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
declare
  v_endpoint_outcomes jsonb;
  a record;
begin
  perform set_config('synchronous_commit', 'off', true);
  -- The batch's queued events first, in order: a claim of one of them (its lease ran out) that writes a waiting
  -- delivery this batch writes too then finishes before, instead of each waiting for the other.
  perform 1 from webhook_fanout f
   where f.event_id = any (array(select distinct (x->>'event_id')::bigint from jsonb_array_elements(p_attempts) x))
   order by f.event_id for no key update;
  with outcome as (
    select * from jsonb_to_recordset(p_attempts) as x(delivery_id uuid, webhook_id uuid, event_id bigint, event_created_at timestamptz,
                                                     attempt int, attempted_at timestamptz, status_code int, error text, duration_ms int,
                                                     status text, next_attempt_at timestamptz, finished_at timestamptz)
  ), delivery as (
    insert into webhook_deliveries as d (id, webhook_id, event_id, status, attempts, next_attempt_at, last_error, delivered_at, created_at)
    select o.delivery_id, o.webhook_id, o.event_id, o.status, o.attempt, o.next_attempt_at, o.error,
           case when o.status = 'delivered' then o.finished_at end, o.event_created_at
      from outcome o
     -- A delivery whose endpoint or event was deleted meanwhile records nothing, and fails nothing else in the
     -- batch (locked: they cannot go before the commit).
     where exists (select 1 from webhooks w where w.id = o.webhook_id for key share)
       and exists (select 1 from booking_events e where e.id = o.event_id for key share)
    on conflict (id) do update
       set attempts = excluded.attempts, status = excluded.status, next_attempt_at = excluded.next_attempt_at,
           last_error = excluded.last_error, delivered_at = excluded.delivered_at
     -- One attempted again after a lapsed lease (by another process) records nothing.
     where d.status = 'pending' and d.attempts = excluded.attempts - 1
    returning d.id
  ), recorded as (
    select o.* from outcome o join delivery r on r.id = o.delivery_id
  ), attempt as (
    insert into webhook_attempts (delivery_id, attempt, attempted_at, status_code, error, duration_ms)
    select r.delivery_id, r.attempt, r.attempted_at, r.status_code, r.error, r.duration_ms from recorded r
  ), changing as materialized (
    -- Each endpoint looked up once (as a semi-join it was looked up once per outcome for every outcome).
    select distinct c.webhook_id from recorded c join webhooks w on w.id = c.webhook_id
     where c.status = 'failed' or w.consecutive_failures <> 0
  )
  select jsonb_agg(jsonb_build_object('webhook_id', r.webhook_id, 'status', r.status, 'error', r.error, 'finished_at', r.finished_at))
    into v_endpoint_outcomes
    from recorded r join changing on changing.webhook_id = r.webhook_id
   where r.status <> 'pending';

  for a in
    select * from jsonb_to_recordset(coalesce(v_endpoint_outcomes, '[]')) as x(webhook_id uuid, status text, error text, finished_at timestamptz)
     order by x.webhook_id, x.finished_at
  loop
    update webhooks w
       set consecutive_failures = case a.status when 'delivered' then 0 else w.consecutive_failures + 1 end,
           disabled_at = case when a.status = 'failed' and w.disabled_at is null and w.consecutive_failures + 1 >= p_disable_after
                              then a.finished_at else w.disabled_at end,
           disabled_reason = case when a.status = 'failed' and w.disabled_at is null and w.consecutive_failures + 1 >= p_disable_after
                                  then (w.consecutive_failures + 1) || ' deliveries in a row failed; last error: ' || a.error
                                  else w.disabled_reason end
     where w.id = a.webhook_id
       -- Only a failed delivery, or the first success after failures, changes the endpoint.
       and (a.status = 'failed' or (a.status = 'delivered' and w.consecutive_failures <> 0));
  end loop;

  -- A statement of its own: it must see the deliveries written above. An event some of whose outcomes were
  -- lost (a batch that failed) stays queued, and is claimed again for those endpoints when its lease ends.
  delete from webhook_fanout f
   where f.event_id = any (array(select (x->>'event_id')::bigint from jsonb_array_elements(p_attempts) x where (x->>'completes_event')::boolean))
     and not exists (select 1 from booking_events e join webhooks w on w.agent_id = e.agent_id and webhook_takes_event(w, e)
                      where e.id = f.event_id
                        and not exists (select 1 from webhook_deliveries d where d.id = webhook_delivery_id(e.id, w.id)));
end
$function$
;

CREATE OR REPLACE FUNCTION public.redeem_magic_link(p_token_hash text, p_at timestamp with time zone)
 RETURNS TABLE(id uuid, email text)
 LANGUAGE plpgsql
AS $function$
#variable_conflict use_column
declare
  v_email text;
begin
  update magic_link_tokens set used_at = p_at where token_hash = p_token_hash and used_at is null and expires_at > p_at
  returning magic_link_tokens.email into v_email;
  if v_email is null then return; end if;
  return query
    insert into users as u (id, email, created_at, last_sign_in_at) values (gen_random_uuid(), v_email, p_at, p_at)
    on conflict (email) do update set last_sign_in_at = excluded.last_sign_in_at
    returning u.id, u.email::text;
end;
$function$
;

CREATE OR REPLACE FUNCTION public.reschedule_booking(p_actor uuid, p_booking uuid, p_expected_version integer, p_scope text, p_occurrence timestamp with time zone, p_starts timestamp with time zone, p_ends timestamp with time zone, p_rrule text, p_exdates jsonb, p_slots jsonb, p_kept_rrule text, p_kept_exdates jsonb, p_at timestamp with time zone)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
declare
  v_agent uuid;
  v_old bookings;
  v_booking bookings;
  v_ranges tstzrange[] := array(select tstzrange(s.starts_at, s.ends_at, '[)') from jsonb_to_recordset(p_slots) as s(starts_at timestamptz, ends_at timestamptz));
  v_refusal jsonb;
  v_previous jsonb;
begin
  select agent_id into v_agent from bookings where id = p_booking;
  if not found then return '{"missing": true}'::jsonb; end if;
  perform 1 from agents where id = v_agent for no key update;
  select * into v_old from bookings where id = p_booking;
  if v_old.agent_id <> p_actor then return '{"forbidden": true}'::jsonb; end if;
  if v_old.status <> 'confirmed' then return jsonb_build_object('notConfirmed', v_old.status); end if;
  if p_expected_version is not null and v_old.version <> p_expected_version then
    return jsonb_build_object('versionMismatch', v_old.version);
  end if;

  if p_scope = 'series' then
    v_refusal := booking_refusal(p_actor, v_agent, v_ranges, p_at, p_booking);
    if v_refusal is not null then return jsonb_build_object('refused', v_refusal); end if;
    perform booking_purge_expired_holds(v_agent, v_ranges, p_at);
    v_booking := booking_move(p_booking, p_starts, p_ends, p_rrule, p_exdates, p_slots);
    v_previous := jsonb_build_object('bookingId', p_booking, 'startsAt', iso_instant(v_old.starts_at), 'endsAt', iso_instant(v_old.ends_at),
                                     'version', v_old.version);
  else
    if p_scope = 'occurrence' then
      perform booking_exclude_occurrences(p_booking, array[p_occurrence]);
    else
      perform booking_move(p_booking, v_old.starts_at, v_old.ends_at, p_kept_rrule, p_kept_exdates,
                           (select coalesce(jsonb_agg(jsonb_build_object('starts_at', s.starts_at, 'ends_at', s.ends_at) order by s.starts_at), '[]'::jsonb)
                              from booking_slots s where s.booking_id = p_booking and s.starts_at < p_occurrence));
    end if;
    v_refusal := booking_refusal(p_actor, v_agent, v_ranges, p_at, null);
    if v_refusal is not null then
      raise exception using errcode = 'SR001', message = 'the new range is refused', detail = v_refusal::text;
    end if;
    perform booking_purge_expired_holds(v_agent, v_ranges, p_at);
    v_booking := booking_insert(gen_random_uuid(), v_agent, p_starts, p_ends, p_rrule, p_exdates, p_at, p_slots, null);
    v_previous := jsonb_build_object('bookingId', p_booking, 'startsAt', iso_instant(p_occurrence),
                                     'endsAt', iso_instant(p_occurrence + (v_old.ends_at - v_old.starts_at)), 'version', v_old.version);
  end if;
  return jsonb_build_object('booking', booking_item(v_booking), 'previous', v_previous,
                            'events', jsonb_build_array(record_booking_event(v_agent, 'booking.rescheduled', v_booking, p_at, v_previous)));
end
$function$
;

CREATE OR REPLACE FUNCTION public.send_booking_reminder(p_booking uuid, p_at timestamp with time zone)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
declare
  v_agent uuid;
  v_booking bookings;
begin
  loop
    select agent_id into v_agent from bookings where id = p_booking;
    if not found then return null; end if;
    perform 1 from agents where id = v_agent for no key update;
    -- A transfer may have moved the booking while this waited for the lock: then lock its new owner.
    exit when (select agent_id from bookings where id = p_booking) = v_agent;
  end loop;
  v_booking := booking_mark_reminded(p_booking, p_at);
  if v_booking.id is null then return null; end if;
  return jsonb_build_object('booking', booking_item(v_booking),
                            'events', jsonb_build_array(record_booking_event(v_agent, 'booking.reminder', v_booking, p_at)));
end
$function$
;

CREATE OR REPLACE FUNCTION public.slot_admitted(p_caller uuid, p_rules availability_rules, p_slots tstzrange[], p_at timestamp with time zone, p_ignore uuid)
 RETURNS boolean
 LANGUAGE plpgsql
 STABLE
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  v_slot tstzrange;
  v_day date;
  v_local_start timestamp;
  v_local_end timestamp;
  v_hours int4multirange;
  v_period_end timestamptz;
  v_counted bigint;
begin
  if cardinality(p_slots) <> 1 then return false; end if;
  v_slot := p_slots[1];
  if exists (select 1 from booking_slots s
              where s.agent_id = p_rules.agent_id
                and tstzrange(s.blocked_from, s.blocked_until, '[)')
                    && tstzrange(lower(v_slot) - make_interval(mins => p_rules.buffer_before_minutes),
                                 upper(v_slot) + make_interval(mins => p_rules.buffer_after_minutes), '[)')) then
    return false;
  end if;
  if p_caller = p_rules.agent_id and not p_rules.enforce_on_own_bookings then return true; end if;
  if lower(v_slot) < p_at + make_interval(mins => p_rules.minimum_notice_minutes)
     or lower(v_slot) > p_at + make_interval(days => p_rules.maximum_advance_days) then
    return false;
  end if;
  v_local_start := lower(v_slot) at time zone p_rules.time_zone;
  v_local_end := upper(v_slot) at time zone p_rules.time_zone;
  v_day := v_local_start::date;
  if v_local_end <= (v_day + 1)::timestamp
     and timezone(p_rules.time_zone, timezone('UTC', (v_day - 1)::timestamp)) - (v_day - 1)::timestamp
         = timezone(p_rules.time_zone, timezone('UTC', (v_day + 2)::timestamp)) - (v_day + 2)::timestamp then
    -- Inside one local day with no change of offset from the day before to the day after: common_working_ranges reads
    -- that day's intervals with one offset, so the slot is working time when its wall-clock minutes lie in one of them.
    select o.hours into v_hours from availability_overrides o where o.agent_id = p_rules.agent_id and o.on_date = v_day;
    if not found then v_hours := coalesce(p_rules.weekly_hours[extract(isodow from v_day)::int], '{[0,1440)}'::int4multirange); end if;
    if not v_hours @> int4range(floor(extract(epoch from v_local_start - v_day) / 60)::int, ceil(extract(epoch from v_local_end - v_day) / 60)::int) then
      return false;
    end if;
  elsif not agent_working_ranges(p_rules, lower(v_slot), upper(v_slot)) @> v_slot then
    return false;
  end if;
  if p_rules.daily_limit is not null then
    v_period_end := (v_day + 1)::timestamp at time zone p_rules.time_zone;
    if ((v_period_end - interval '1 second') at time zone p_rules.time_zone)::date <> v_day then return false; end if;
    select coalesce(sum(c.booked + c.held), 0) into v_counted from agent_day_slots c where c.agent_id = p_rules.agent_id and c.on_date = v_day;
    if v_counted + 1 > p_rules.daily_limit then return false; end if;
  end if;
  if p_rules.weekly_limit is not null then
    v_day := date_trunc('week', v_day)::date;
    v_period_end := (v_day + 7)::timestamp at time zone p_rules.time_zone;
    if ((v_period_end - interval '1 second') at time zone p_rules.time_zone)::date <> v_day + 6 then return false; end if;
    select coalesce(sum(c.booked + c.held), 0) into v_counted from agent_day_slots c
     where c.agent_id = p_rules.agent_id and c.on_date between v_day and v_day + 6;
    if v_counted + 1 > p_rules.weekly_limit then return false; end if;
  end if;
  return true;
end
$function$
;

CREATE OR REPLACE FUNCTION public.slot_is_live(p_hold uuid, p_at timestamp with time zone)
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $function$
  select p_hold is null
      or exists (select 1 from holds h where h.id = p_hold and h.expires_at > p_at and h.confirmed_at is null and h.released_at is null);
$function$
;

CREATE OR REPLACE FUNCTION public.slot_refusals(p_caller uuid, p_agent uuid, p_slots tstzrange[], p_at timestamp with time zone, p_ignore uuid, p_max integer)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  r availability_rules;
  v_binds boolean;
  v_before interval;
  v_after interval;
  v_reasons jsonb;
begin
  select * into r from availability_rules where agent_id = p_agent;
  v_binds := r.agent_id is not null and (p_caller is distinct from p_agent or r.enforce_on_own_bookings);
  v_before := make_interval(mins => coalesce(r.buffer_before_minutes, 0));
  v_after := make_interval(mins => coalesce(r.buffer_after_minutes, 0));
  with candidate as (
    select c.slot, lower(c.slot) as starts_at, tstzrange(lower(c.slot) - v_before, upper(c.slot) + v_after, '[)') as blocked
      from unnest(p_slots) as c(slot)
  ), conflict as (
    select 1 as rank, candidate.starts_at,
           case when tstzrange(x.starts_at, x.ends_at, '[)') && candidate.slot then 'slot_taken' else 'buffer_conflict' end as code,
           case when x.hold_id is null then jsonb_build_object('bookingId', x.booking_id)
                else jsonb_build_object('holdId', x.hold_id, 'heldByCaller', x.holder_agent_id = p_caller) end as detail
      from candidate
     cross join lateral (
       select s.booking_id, s.starts_at, s.ends_at, s.hold_id, h.holder_agent_id
         from booking_slots s left join holds h on h.id = s.hold_id
        where s.agent_id = p_agent and tstzrange(s.blocked_from, s.blocked_until, '[)') && candidate.blocked
          and s.booking_id is distinct from p_ignore
          and (s.hold_id is null or (h.expires_at > p_at and h.confirmed_at is null and h.released_at is null))
        order by s.starts_at
        limit p_max
     ) x
  ), working as (
    select agent_working_ranges(r, min(lower(slot)), max(upper(slot))) as ranges from candidate where v_binds
  ), timing as (
    select 2 as rank, candidate.starts_at, 'outside_working_hours' as code, '{}'::jsonb as detail
      from candidate, working where v_binds and not working.ranges @> candidate.slot
    union all
    select 3, candidate.starts_at, 'notice_too_short', jsonb_build_object('earliestStartsAt', iso_instant(p_at + make_interval(mins => r.minimum_notice_minutes)))
      from candidate where v_binds and candidate.starts_at < p_at + make_interval(mins => r.minimum_notice_minutes)
    union all
    select 4, candidate.starts_at, 'too_far_ahead', jsonb_build_object('latestStartsAt', iso_instant(p_at + make_interval(days => r.maximum_advance_days)))
      from candidate where v_binds and candidate.starts_at > p_at + make_interval(days => r.maximum_advance_days)
  ), period as (
    -- The local day and ISO week of each candidate, as instants (midnight read by the rule above).
    select candidate.starts_at, p.kind, p.period_start, p.period_start at time zone r.time_zone as from_at,
           (p.period_start + p.length) at time zone r.time_zone as until_at, p.limit_count
      from candidate
     cross join lateral (
       select 'day' as kind, date_trunc('day', candidate.starts_at at time zone r.time_zone) as period_start, interval '1 day' as length,
              r.daily_limit as limit_count
       union all
       select 'week', date_trunc('week', candidate.starts_at at time zone r.time_zone), interval '7 days', r.weekly_limit
     ) p
     where v_binds and p.limit_count is not null
  ), over_limit as (
    select 5 + (kind = 'week')::int as rank, min(starts_at) filter (where over) as starts_at,
           case kind when 'day' then 'daily_limit_reached' else 'weekly_limit_reached' end as code,
           case kind when 'day' then jsonb_build_object('limit', limit_count, 'date', period_start::date)
                else jsonb_build_object('limit', limit_count, 'weekOf', period_start::date) end as detail
      from (
        select period.*, (count(*) over (partition by kind, period_start order by starts_at) + (
                 select count(*) from booking_slots s left join holds h on h.id = s.hold_id
                  where s.agent_id = p_agent and tstzrange(s.blocked_from, s.blocked_until, '[)') && tstzrange(period.from_at, period.until_at, '[)')
                    and s.starts_at >= period.from_at and s.starts_at < period.until_at
                    and s.booking_id is distinct from p_ignore
                    and (s.hold_id is null or (h.expires_at > p_at and h.confirmed_at is null and h.released_at is null)))) > limit_count as over
          from period
      ) counted
     group by kind, period_start, limit_count
    having bool_or(over)
  )
  select coalesce(jsonb_agg(jsonb_build_object('code', code, 'startsAt', iso_instant(starts_at)) || detail
                            order by rank, starts_at), '[]'::jsonb)
    into v_reasons
    from (select * from (select * from conflict union all select * from timing union all select * from over_limit) every_reason
           order by rank, starts_at limit p_max) first_reasons;
  return v_reasons;
end
$function$
;

CREATE OR REPLACE FUNCTION public.toggle_vote(p_user uuid, p_tool bigint, p_agent_id text, p_at timestamp with time zone)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
declare
  v_removed int;
begin
  if not exists (select 1 from tools where id = p_tool) then return '{"missing": true}'::jsonb; end if;
  perform pg_advisory_xact_lock(hashtextextended('vote:' || p_user || ':' || p_tool, 0));
  delete from votes where tool_id = p_tool and user_id = p_user;
  get diagnostics v_removed = row_count;
  if v_removed = 0 then
    insert into votes (tool_id, user_id, agent_id, created_at) values (p_tool, p_user, p_agent_id, p_at);
  end if;
  return jsonb_build_object('voted', v_removed = 0, 'voteCount', (select vote_count from tools where id = p_tool));
end;
$function$
;

CREATE OR REPLACE FUNCTION public.votes_maintain_counts()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
begin
  if tg_op = 'INSERT' then
    update tools set vote_count = vote_count + 1 where id = new.tool_id;
    insert into tool_vote_days (tool_id, day, votes) values (new.tool_id, (new.created_at at time zone 'UTC')::date, 1)
      on conflict (tool_id, day) do update set votes = tool_vote_days.votes + 1;
    return new;
  end if;
  update tools set vote_count = vote_count - 1 where id = old.tool_id;
  update tool_vote_days set votes = votes - 1 where tool_id = old.tool_id and day = (old.created_at at time zone 'UTC')::date;
  return old;
end
$function$
;

CREATE OR REPLACE FUNCTION public.webhook_delivery_id(p_event_id bigint, p_webhook_id uuid)
 RETURNS uuid
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
  select overlay(overlay(md5(p_event_id::text || '/' || p_webhook_id::text) placing '8' from 13)
                 placing substr('89ab', get_byte(decode('0' || substr(md5(p_event_id::text || '/' || p_webhook_id::text), 17, 1), 'hex'), 0) % 4 + 1, 1)
                 from 17)::uuid
$function$
;

CREATE OR REPLACE FUNCTION public.webhook_takes_event(p_webhook webhooks, p_event booking_events)
 RETURNS boolean
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
  select p_event.type = any (p_webhook.events) and p_webhook.created_at <= p_event.created_at
         and (p_webhook.disabled_at is null or p_webhook.disabled_at > p_event.created_at)
$function$
;

CREATE OR REPLACE FUNCTION public.webhooks_per_agent_limit()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
begin
  perform 1 from agents where id = new.agent_id for no key update;
  if (select count(*) from webhooks where agent_id = new.agent_id) >= 20 then
    raise exception 'an agent has at most 20 webhooks'
      using errcode = 'check_violation', constraint = 'webhooks_per_agent_limit';
  end if;
  return new;
end;
$function$
;

CREATE OR REPLACE FUNCTION public.zone_offset_change(p_zone text, p_from timestamp with time zone, p_to timestamp with time zone)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 STABLE
AS $function$
declare
  v_low bigint := extract(epoch from p_from)::bigint;
  v_high bigint := extract(epoch from p_to)::bigint;
  v_before interval := timezone(p_zone, to_timestamp(v_low)) - timezone('UTC', to_timestamp(v_low));
  v_middle bigint;
begin
  if timezone(p_zone, to_timestamp(v_high)) - timezone('UTC', to_timestamp(v_high)) = v_before then return null; end if;
  while v_high - v_low > 1 loop
    v_middle := (v_low + v_high) / 2;
    if timezone(p_zone, to_timestamp(v_middle)) - timezone('UTC', to_timestamp(v_middle)) = v_before then v_low := v_middle; else v_high := v_middle; end if;
  end loop;
  return to_timestamp(v_high);
end
$function$
;

-- Triggers

CREATE TRIGGER agents_credential_changed AFTER DELETE OR UPDATE ON public.agents FOR EACH ROW EXECUTE FUNCTION agent_credential_changed();

CREATE TRIGGER agents_family_limit AFTER INSERT ON public.agents REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION agents_family_limit();

CREATE TRIGGER agents_family_root BEFORE INSERT ON public.agents FOR EACH ROW EXECUTE FUNCTION agent_family_root();

CREATE TRIGGER availability_rules_count_days AFTER INSERT ON public.availability_rules FOR EACH ROW EXECUTE FUNCTION count_day_slots_afresh();

CREATE TRIGGER availability_rules_count_days_changes AFTER UPDATE OF time_zone ON public.availability_rules FOR EACH ROW WHEN ((old.time_zone IS DISTINCT FROM new.time_zone)) EXECUTE FUNCTION count_day_slots_afresh();

CREATE TRIGGER booking_slots_count_days AFTER INSERT OR DELETE ON public.booking_slots FOR EACH ROW EXECUTE FUNCTION count_day_slots();

CREATE TRIGGER booking_slots_count_days_changes AFTER UPDATE OF agent_id, starts_at, hold_id ON public.booking_slots FOR EACH ROW WHEN (((old.agent_id IS DISTINCT FROM new.agent_id) OR (old.starts_at IS DISTINCT FROM new.starts_at) OR ((old.hold_id IS NULL) <> (new.hold_id IS NULL)))) EXECUTE FUNCTION count_day_slots();

CREATE TRIGGER bookings_count_live AFTER INSERT OR DELETE ON public.bookings FOR EACH ROW EXECUTE FUNCTION count_live_bookings();

CREATE TRIGGER bookings_count_live_changes AFTER UPDATE OF status, live_until, agent_id ON public.bookings FOR EACH ROW WHEN ((((old.status)::text IS DISTINCT FROM (new.status)::text) OR (old.live_until IS DISTINCT FROM new.live_until) OR (old.agent_id IS DISTINCT FROM new.agent_id))) EXECUTE FUNCTION count_live_bookings();

CREATE TRIGGER bookings_version BEFORE UPDATE ON public.bookings FOR EACH ROW WHEN ((((((((((old.id IS DISTINCT FROM new.id) OR (old.agent_id IS DISTINCT FROM new.agent_id)) OR (old.starts_at IS DISTINCT FROM new.starts_at)) OR (old.ends_at IS DISTINCT FROM new.ends_at)) OR ((old.status)::text IS DISTINCT FROM (new.status)::text)) OR (old.rrule IS DISTINCT FROM new.rrule)) OR (old.warning_sent_at IS DISTINCT FROM new.warning_sent_at)) OR (old.created_at IS DISTINCT FROM new.created_at)) OR (old.exdates IS DISTINCT FROM new.exdates))) EXECUTE FUNCTION booking_version();

CREATE TRIGGER calendar_feeds_per_agent_limit BEFORE INSERT ON public.calendar_feeds FOR EACH ROW EXECUTE FUNCTION calendar_feeds_per_agent_limit();

CREATE TRIGGER proposals_pending_per_target_limit BEFORE INSERT ON public.proposals FOR EACH ROW EXECUTE FUNCTION proposals_pending_per_target_limit();

CREATE TRIGGER votes_maintain_counts AFTER INSERT OR DELETE ON public.votes FOR EACH ROW EXECUTE FUNCTION votes_maintain_counts();

CREATE TRIGGER webhooks_per_agent_limit BEFORE INSERT ON public.webhooks FOR EACH ROW EXECUTE FUNCTION webhooks_per_agent_limit();
