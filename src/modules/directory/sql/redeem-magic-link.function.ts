import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * Redeems a sign-in link once (a conditional update) and signs its address in, creating the account on
 * first sign-in; answers the user, or no row for an unknown, used or expired link.
 */
export const redeemMagicLinkFunction = sqlDefinition(
  'redeem_magic_link',
  `
create or replace function redeem_magic_link(p_token_hash text, p_at timestamptz) returns table (id uuid, email text) language plpgsql as $$
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
$$;
`,
);
