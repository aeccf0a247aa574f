import { Field, ObjectType } from 'type-graphql';

/** Relay's page info, as every connection in the schema answers it. */
@ObjectType({ simpleResolvers: true })
export class PageInfo {
  @Field()
  hasNextPage!: boolean;

  @Field(() => String, { nullable: true })
  endCursor!: string | null;
}
