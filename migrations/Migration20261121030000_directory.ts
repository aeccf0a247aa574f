import { Migration } from '@mikro-orm/migrations';

// Also declared on the Vote entity (MikroORM compares trigger bodies); keep the two identical.
const VOTE_COUNTS_BODY = `
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
`;

/** The tool directory (seed 001): categories (seeded), tools, votes, accounts, magic links, rate limits. */
export class Migration20261121030000_directory extends Migration {
  override up(): void {
    this.addSql(`
      create table categories (
        id serial primary key,
        name varchar(100) not null,
        slug varchar(100) not null constraint categories_slug_key unique,
        position int not null default 0
      );`);
    this.addSql(`
      insert into categories (name, slug, position) values
        ('Coding', 'coding', 1), ('Writing', 'writing', 2), ('Research', 'research', 3),
        ('Data & Analytics', 'data-analytics', 4), ('Image & Video', 'image-video', 5),
        ('Audio & Speech', 'audio-speech', 6), ('Productivity', 'productivity', 7),
        ('Agents & Automation', 'agents-automation', 8), ('Search', 'search', 9),
        ('Developer Tools', 'developer-tools', 10);`);

    this.addSql(`
      create table users (
        id uuid primary key,
        email varchar(254) not null constraint users_email_key unique,
        created_at timestamptz not null,
        last_sign_in_at timestamptz null
      );`);

    this.addSql(`
      create table tools (
        id bigserial primary key,
        name varchar(255) not null,
        slug varchar(300) not null constraint tools_slug_key unique,
        url text not null,
        url_normalized text not null constraint tools_url_normalized_key unique,
        description varchar(1000) not null,
        category_id int not null constraint tools_category_id_foreign references categories (id) on delete restrict,
        capabilities text[] not null,
        api_endpoint text null,
        auth_method varchar(16) null,
        pricing_model varchar(16) null,
        status varchar(16) not null default 'approved',
        submission_source varchar(8) not null,
        submitted_by_agent varchar(128) null,
        submitted_by_user_id uuid null constraint tools_submitted_by_user_id_foreign references users (id) on delete set null,
        vote_count int not null default 0,
        created_at timestamptz not null,
        constraint tools_name_check check (char_length((name)::text) >= 1),
        constraint tools_vote_count_check check (vote_count >= 0),
        constraint tools_status_check check (status in ('approved')),
        constraint tools_source_check check (submission_source in ('human', 'agent')),
        constraint tools_auth_method_check check (auth_method in ('api_key', 'oauth', 'none', 'other')),
        constraint tools_pricing_model_check check (pricing_model in ('free', 'freemium', 'paid', 'usage_based'))
      );`);
    this.addSql(`create index tools_category_idx on tools (category_id);`);
    this.addSql(`create index tools_votes_idx on tools (vote_count, id);`);
    this.addSql(`create index tools_created_idx on tools (created_at, id);`);
    this.addSql(`create index tools_source_votes_idx on tools (submission_source, vote_count);`);

    this.addSql(`
      create table votes (
        tool_id bigint not null constraint votes_tool_id_foreign references tools (id) on update cascade on delete cascade,
        user_id uuid not null constraint votes_user_id_foreign references users (id) on update cascade on delete cascade,
        agent_id varchar(128) null,
        created_at timestamptz not null,
        constraint votes_pkey primary key (tool_id, user_id)
      );`);
    this.addSql(`create index votes_user_idx on votes (user_id);`);

    // Votes per tool and UTC day: trending reads at most eight days of these, never the votes.
    this.addSql(`
      create table tool_vote_days (
        tool_id bigint not null constraint tool_vote_days_tool_id_foreign references tools (id) on delete cascade,
        day date not null,
        votes int not null,
        constraint tool_vote_days_pkey primary key (tool_id, day),
        constraint tool_vote_days_votes_check check (votes >= 0)
      );`);
    this.addSql(`create index tool_vote_days_day_idx on tool_vote_days (day, tool_id, votes);`);

    // vote_count is the number of vote rows, kept by the database in the voting transaction.
    this.addSql(`create function votes_votes_maintain_counts_fn() returns trigger language plpgsql as $$${VOTE_COUNTS_BODY}$$;`);
    this.addSql(`create trigger votes_maintain_counts after insert or delete on votes for each row execute function votes_votes_maintain_counts_fn();`);

    this.addSql(`
      create table magic_link_tokens (
        token_hash varchar(64) primary key,
        email varchar(254) not null,
        expires_at timestamptz not null,
        used_at timestamptz null,
        created_at timestamptz not null
      );`);

    this.addSql(`create table settings (key varchar(64) primary key, value text not null);`);

    // rate-limiter-flexible's PostgreSQL store, declared here so the schema is versioned with the rest.
    this.addSql(`create table rate_limits (key varchar(255) primary key, points integer not null default 0, expire bigint);`);
  }
}
