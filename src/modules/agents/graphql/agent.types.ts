import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, ObjectType, registerEnumType } from 'type-graphql';
import { FREE_FORM_OBJECT_RULE } from '../../../platform/free-form-object.js';
import type { AgentRecord } from '../sql/agent.sql.js';
import { SCHEDULING_LIMITS } from '../../../platform/api-limits.js';

export enum FreeBusyVisibility {
  family = 'family',
  anyone = 'anyone',
  nobody = 'nobody',
}
registerEnumType(FreeBusyVisibility, {
  name: 'FreeBusyVisibility',
  description: 'Who may ask for an agent’s free/busy (availability, proposeFirstAvailable).',
  valuesConfig: {
    family: { description: 'The agent itself, its parent and its children (the default).' },
    anyone: { description: 'Every agent.' },
    nobody: { description: 'The agent itself only.' },
  },
});

@ObjectType('Agent', { simpleResolvers: true, description: 'An agent seat: owns a calendar and one credential.' })
export class AgentNode {
  @Field(() => ID)
  id!: string;

  @Field()
  name!: string;

  /** Not a field as such: `AgentResolver.metadata` shows it to the agent and its parent only. */
  metadata!: Record<string, unknown>;

  /** Not a field as such: `AgentResolver.config` shows it to the agent and its parent only. */
  config!: Record<string, unknown>;

  @Field()
  createdAt!: Date;

  /** Not a GraphQL field: resolved through a dataloader by `AgentResolver.parent`. */
  parentId!: string | null;

  /** Not a field as such: `AgentResolver.freeBusyVisibility` shows it to the agent and its parent only. */
  freeBusyVisibility!: FreeBusyVisibility;

  static from(agent: AgentRecord): AgentNode {
    return Object.assign(new AgentNode(), agent);
  }
}

@ObjectType({ simpleResolvers: true, description: 'How to send the new credential; the same text for every agent.' })
export class NextStep {
  @Field()
  savePublicToken!: boolean;

  @Field({ description: 'The header form `Authorization: Bearer <public_token>`.' })
  authorization!: string;

  @Field({ description: 'The header form `X-API-Key: <public_token>`.' })
  xApiKey!: string;

  @Field()
  message!: string;
}

@ObjectType({ simpleResolvers: true })
export class CreateAgentPayload {
  @Field(() => AgentNode)
  agent!: AgentNode;

  @Field({ description: 'The credential, shown only in this response; stored only as its SHA-256 hash.' })
  publicToken!: string;

  @Field(() => NextStep)
  nextStep!: NextStep;
}

@InputType()
export class CreateAgentInput {
  @Field({ description: '1 to 120 characters.' })
  name!: string;

  // GraphQL sends an explicit null for an optional field as null: the resolver reads it as absent.
  @Field(() => GraphQLJSONObject, { nullable: true, description: FREE_FORM_OBJECT_RULE })
  metadata?: Record<string, unknown> | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: FREE_FORM_OBJECT_RULE })
  config?: Record<string, unknown> | null;

  @Field(() => String, { nullable: true, description: `1 to ${SCHEDULING_LIMITS.idempotencyKeyMaxLength} characters, unique per installation; a reused key answers \`conflict\`.` })
  idempotencyKey?: string | null;

  @Field(() => Boolean, { nullable: true, description: 'Only `true`: claim the first agent of a new installation (no credential).' })
  bootstrap?: boolean | null;
}
