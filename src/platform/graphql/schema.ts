import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { createPubSub } from '@graphql-yoga/subscription';
import { buildSchema, type ContainerType, type PubSub } from 'type-graphql';
import { DateTimeIso } from './date-time.js';

/** A resolver class, as type-graphql reads it from decorators. */
export type ResolverClass = new (...args: never[]) => object;

export interface SchemaOptions {
  /** Resolver classes of every module. */
  resolvers: readonly ResolverClass[];
  /** Resolver instances by class; omitted when only the SDL is wanted (schema emit). */
  container?: ContainerType;
  pubSub?: PubSub;
}

/** Builds the one gateway schema from the modules' type-graphql resolvers. */
export async function buildGatewaySchema(options: SchemaOptions): Promise<GraphQLSchema> {
  const [first, ...rest] = options.resolvers;
  if (!first) throw new Error('the gateway schema needs at least one resolver');
  return buildSchema({
    resolvers: [first, ...rest],
    validate: false,
    scalarsMap: [{ type: Date, scalar: DateTimeIso }],
    ...(options.container ? { container: options.container } : {}),
    // type-graphql insists on a PubSub whenever a schema has subscriptions, even where each
    // subscription brings its own `subscribe` (ours read PostgreSQL LISTEN/NOTIFY streams).
    pubSub: options.pubSub ?? createPubSub(),
  });
}

/** The committed SDL: sorted, so that the file changes only when the schema does. */
export function printGatewaySchema(schema: GraphQLSchema): string {
  return `${printSchema(lexicographicSortSchema(schema)).trim()}\n`;
}

/** A type-graphql container over resolver instances built by hand (no DI framework). */
export function resolverContainer(instances: readonly object[]): ContainerType {
  const byClass = new Map<unknown, object>(instances.map((instance) => [instance.constructor, instance]));
  return {
    get(resolverClass: ResolverClass) {
      const instance = byClass.get(resolverClass);
      if (!instance) throw new Error(`no instance registered for resolver ${resolverClass.name}`);
      return instance;
    },
  };
}
