import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * A UUID version 7 (RFC 9562: 48 bits of Unix time in milliseconds, the version, the variant, 74 random bits), for
 * the ids of webhook deliveries. Deliveries are written, leased and recorded at a few thousand a second, each a new
 * entry in their primary key (and their attempts' index on it): random ids put every entry on a random leaf page,
 * which after each checkpoint costs a full-page image in the WAL (in S5, 10 deliveries per create, 73–77 % of the
 * WAL was full-page images, 15–19 KB per create); time-ordered ids keep them on the newest pages. PostgreSQL 18 has
 * `uuidv7()`; this is the same layout for the 14–17 the gateway also runs on: a version 4 UUID with its first six
 * bytes replaced by the time and its version bits set from 0100 to 0111.
 */
export const timeOrderedUuidFunction = sqlDefinition(
  'time_ordered_uuid',
  `
create or replace function time_ordered_uuid() returns uuid language sql volatile parallel safe as $$
  select encode(
           set_bit(set_bit(
             overlay(uuid_send(gen_random_uuid())
                     placing substring(int8send(floor(extract(epoch from clock_timestamp()) * 1000)::bigint) from 3)
                     from 1 for 6),
             52, 1), 53, 1),
           'hex')::uuid;
$$;
`,
);
