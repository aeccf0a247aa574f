import { ArrayType, BigIntType } from '@mikro-orm/core';
import { Check, Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Category } from './category.entity.js';
import { User } from './user.entity.js';

import type { AuthMethod, PricingModel } from '../tool-rules.js';

export { AUTH_METHODS, PRICING_MODELS, type AuthMethod, type PricingModel } from '../tool-rules.js';

/** A tool in the directory. Submissions are approved at once; `vote_count` is kept by a trigger. */
@Entity({ tableName: 'tools' })
@Check({ name: 'tools_name_check', expression: 'char_length((name)::text) >= 1' })
@Check({ name: 'tools_vote_count_check', expression: 'vote_count >= 0' })
@Check({ name: 'tools_status_check', expression: `"status" in ('approved')` })
@Check({ name: 'tools_source_check', expression: `"submission_source" in ('human', 'agent')` })
@Check({ name: 'tools_auth_method_check', expression: `"auth_method" in ('api_key', 'oauth', 'none', 'other')` })
@Check({ name: 'tools_pricing_model_check', expression: `"pricing_model" in ('free', 'freemium', 'paid', 'usage_based')` })
@Index({ name: 'tools_category_idx', properties: ['category'] })
@Index({ name: 'tools_votes_idx', properties: ['voteCount', 'id'] })
@Index({ name: 'tools_created_idx', properties: ['createdAt', 'id'] })
@Index({ name: 'tools_source_votes_idx', properties: ['submissionSource', 'voteCount'] })
export class Tool {
  @PrimaryKey({ type: new BigIntType('number'), autoincrement: true })
  id!: number;

  @Property({ type: 'string', length: 255 })
  name!: string;

  @Property({ type: 'string', length: 300, unique: 'tools_slug_key' })
  slug!: string;

  /** As submitted. */
  @Property({ type: 'text' })
  url!: string;

  /** Scheme and host lower-cased, default port and trailing slash removed: unique. */
  @Property({ type: 'text', unique: 'tools_url_normalized_key' })
  urlNormalized!: string;

  @Property({ type: 'string', length: 1000 })
  description!: string;

  @ManyToOne(() => Category, { deleteRule: 'restrict' })
  category!: Category;

  @Property({ type: ArrayType, columnType: 'text[]' })
  capabilities: string[] = [];

  @Property({ type: 'text', nullable: true })
  apiEndpoint: string | null = null;

  @Property({ type: 'string', length: 16, nullable: true })
  authMethod: AuthMethod | null = null;

  @Property({ type: 'string', length: 16, nullable: true })
  pricingModel: PricingModel | null = null;

  @Property({ type: 'string', length: 16, default: 'approved' })
  status = 'approved';

  @Property({ type: 'string', length: 8 })
  submissionSource!: 'human' | 'agent';

  @Property({ type: 'string', length: 128, nullable: true })
  submittedByAgent: string | null = null;

  @ManyToOne(() => User, { nullable: true, deleteRule: 'set null', fieldName: 'submitted_by_user_id' })
  submittedByUser: User | null = null;

  @Property({ type: 'integer', default: 0 })
  voteCount = 0;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  createdAt: Date = new Date();
}
