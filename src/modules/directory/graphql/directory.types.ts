import { Directive, Field, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { cacheControl } from '../../../platform/graphql/directives.js';
import type { ToolView } from '../tool.service.js';

export enum ToolSortOrder {
  votes = 'votes',
  newest = 'newest',
  trending = 'trending',
}
/** The catalogue is public (the viewer's own vote excepted): shared caches may keep it 30 s, votes move it. */
export const DIRECTORY_CACHE = cacheControl({ maxAge: 30 });

registerEnumType(ToolSortOrder, {
  name: 'ToolSort',
  description: 'votes: most votes first; newest: latest first; trending: votes of the last 7 days, newer ones weighing more.',
});

@ObjectType('Category')
@Directive(DIRECTORY_CACHE)
export class CategoryNode {
  @Field(() => Int)
  id!: number;

  @Field()
  name!: string;

  @Field()
  slug!: string;

  @Field(() => Int, { nullable: true, description: 'Tools in the category (on `categories`).' })
  toolCount?: number;
}

@ObjectType('Tool', { description: 'A tool in the directory.' })
@Directive(DIRECTORY_CACHE)
export class ToolNode {
  @Field(() => Int)
  id!: number;

  @Field()
  name!: string;

  @Field()
  url!: string;

  @Field()
  description!: string;

  @Field(() => Int)
  voteCount!: number;

  @Field()
  slug!: string;

  /** Not a field: `category` is resolved through a dataloader. */
  categoryId!: number;

  @Field(() => CategoryNode)
  category?: CategoryNode;

  @Field({ description: '`human`, or `agent` when submitted with X-Agent-Id.' })
  submissionSource!: string;

  @Field(() => [String])
  capabilities!: string[];

  @Field(() => String, { nullable: true, description: 'free, freemium, paid or usage_based' })
  pricingModel!: string | null;

  @Field(() => String, { nullable: true })
  apiEndpoint!: string | null;

  @Field(() => String, { nullable: true, description: 'api_key, oauth, none or other' })
  authMethod!: string | null;

  @Field(() => String, { nullable: true, description: 'The X-Agent-Id that submitted it.' })
  submittedByAgent!: string | null;

  @Field()
  createdAt!: Date;

  // The caller's own: never kept by a shared cache, nor by the caller's (a vote changes it).
  @Field({ description: 'Whether the signed-in viewer has voted for it (false when signed out).' })
  @Directive(cacheControl({ maxAge: 0, scope: 'PRIVATE' }))
  viewerHasVoted?: boolean;

  static from(view: ToolView): ToolNode {
    return Object.assign(new ToolNode(), view);
  }
}

@ObjectType()
@Directive(DIRECTORY_CACHE)
export class ToolPageNode {
  @Field(() => [ToolNode])
  tools!: ToolNode[];

  @Field(() => Int)
  page!: number;

  @Field(() => Int)
  totalPages!: number;

  @Field(() => Int)
  totalTools!: number;
}

@ObjectType()
@Directive(DIRECTORY_CACHE)
export class Leaderboard {
  @Field(() => [ToolNode], { description: 'Agent-submitted tools by votes.' })
  agents!: ToolNode[];

  @Field(() => [ToolNode], { description: 'Human-submitted tools by votes.' })
  humans!: ToolNode[];
}

@ObjectType('DirectoryStats')
@Directive(DIRECTORY_CACHE)
export class StatsNode {
  @Field(() => Int)
  totalTools!: number;

  @Field(() => Int)
  totalVotes!: number;

  @Field(() => Int)
  agentSubmissions!: number;

  @Field(() => Int)
  agentVotes!: number;
}

@ObjectType()
export class VoteResult {
  @Field()
  voted!: boolean;

  @Field(() => Int)
  voteCount!: number;

  @Field(() => ToolNode)
  tool!: ToolNode;
}

@ObjectType('DirectoryUser')
export class DirectoryUserNode {
  @Field()
  id!: string;

  @Field()
  email!: string;
}

@ObjectType()
export class Session {
  @Field({ description: 'A JWT for `Authorization: Bearer …`; the page keeps it under localStorage `lp_token`.' })
  token!: string;

  @Field()
  expiresAt!: Date;

  @Field(() => DirectoryUserNode)
  user!: DirectoryUserNode;
}

@InputType()
export class SubmitToolInput {
  @Field({ description: 'At most 255 characters.' })
  name!: string;

  @Field({ description: 'http(s) URL; unique (scheme and host case, default port and trailing slash ignored).' })
  url!: string;

  @Field({ description: 'At most 1000 characters.' })
  description!: string;

  @Field(() => Int)
  categoryId!: number;

  @Field(() => [String], { nullable: true })
  capabilities?: string[] | null;

  @Field(() => String, { nullable: true })
  apiEndpoint?: string | null;

  @Field(() => String, { nullable: true, description: 'api_key, oauth, none or other' })
  authMethod?: string | null;

  @Field(() => String, { nullable: true, description: 'free, freemium, paid or usage_based' })
  pricingModel?: string | null;
}
