import { Migration } from '@mikro-orm/migrations';

/**
 * Webhooks one agent may register: every event writes one delivery per webhook inside the booking
 * write. The trigger below holds this number; changing it takes a new migration, not an edit here.
 */
export const MAX_WEBHOOKS_PER_AGENT = 20;

/**
 * Kept identical to the `@Trigger` on the Webhook entity (MikroORM compares trigger bodies). The
 * agent's row lock makes concurrent registrations of one agent count one after the other.
 */
export const WEBHOOKS_PER_AGENT_LIMIT_BODY = `
  perform 1 from agents where id = new.agent_id for no key update;
  if (select count(*) from webhooks where agent_id = new.agent_id) >= ${MAX_WEBHOOKS_PER_AGENT} then
    raise exception 'an agent has at most ${MAX_WEBHOOKS_PER_AGENT} webhooks'
      using errcode = 'check_violation', constraint = 'webhooks_per_agent_limit';
  end if;
  return new;
`;

/** At most MAX_WEBHOOKS_PER_AGENT webhooks per agent, held by the database. */
export class Migration20261123010000_webhook_limit extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create function webhooks_webhooks_per_agent_limit_fn() returns trigger language plpgsql as $$
begin${WEBHOOKS_PER_AGENT_LIMIT_BODY}end;
$$;`);
    this.addSql(`create trigger webhooks_per_agent_limit before insert on webhooks for each row execute function webhooks_webhooks_per_agent_limit_fn();`);
  }
}
