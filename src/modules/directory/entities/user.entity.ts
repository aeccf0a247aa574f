import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { ACCOUNT_LIMITS } from '../limits.js';

/** A directory account: created on the first magic-link sign-in of an e-mail address. */
@Entity({ tableName: 'users' })
export class User {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  /** Lower-cased. */
  @Property({ type: 'string', length: ACCOUNT_LIMITS.emailMaxLength, unique: 'users_email_key' })
  email!: string;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  createdAt: Date = new Date();

  @Property({ type: 'Date', columnType: 'timestamptz', nullable: true })
  lastSignInAt: Date | null = null;
}
