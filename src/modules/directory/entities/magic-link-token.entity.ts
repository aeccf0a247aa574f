import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { ACCOUNT_LIMITS } from '../limits.js';

/** A one-time sign-in token, stored only as its SHA-256 hash; redeemed at most once. */
@Entity({ tableName: 'magic_link_tokens' })
export class MagicLinkToken {
  @PrimaryKey({ type: 'string', length: 64 })
  tokenHash!: string;

  @Property({ type: 'string', length: ACCOUNT_LIMITS.emailMaxLength })
  email!: string;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  expiresAt!: Date;

  @Property({ type: 'Date', columnType: 'timestamptz', nullable: true })
  usedAt: Date | null = null;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  createdAt: Date = new Date();
}
