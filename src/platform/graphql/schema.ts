import { printSchemaWithDirectives } from '@graphql-tools/utils';
import { lexicographicSortSchema, specifiedDirectives, type GraphQLSchema } from 'graphql';
import { createPubSub } from '@graphql-yoga/subscription';
import { buildSchema, type ContainerType, type PubSub } from 'type-graphql';
import { DateTimeIso } from './date-time.js';
import { GATEWAY_DIRECTIVES } from './directives.js';

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
    // graphql-js takes a schema's directive list as given: without the specified ones, `@skip` and
    // `@include` were refused as unknown in every document.
    directives: [...specifiedDirectives, ...GATEWAY_DIRECTIVES],
    ...(options.container ? { container: options.container } : {}),
    // type-graphql insists on a PubSub whenever a schema has subscriptions, even where each
    // subscription brings its own `subscribe` (ours read PostgreSQL LISTEN/NOTIFY streams).
    pubSub: options.pubSub ?? createPubSub(),
  });
}

/**
 * The committed SDL: sorted, so that the file changes only when the schema does, with the directives
 * applied to types and fields (`@cacheControl`, the cost directives) that tools read, which graphql-js's
 * printSchema leaves out. graphql-tools prints them; its output is brought to graphql-js's layout (no
 * `schema` block for the default root names, a blank line before a described member that is not first
 * in its block), so a schema without applied directives prints exactly as printSchema would.
 */
export function printGatewaySchema(schema: GraphQLSchema): string {
  const printed = printSchemaWithDirectives(lexicographicSortSchema(schema)).replace(/^schema \{\s*query: Query\s*(mutation: Mutation\s*)?(subscription: Subscription\s*)?\}\n\n/, '');
  return `${withBlankLinesBeforeDescriptions(printed).trim()}\n`;
}

function withBlankLinesBeforeDescriptions(sdl: string): string {
  const lines: string[] = [];
  let inBlockString = false;
  for (const line of sdl.split('\n')) {
    const trimmed = line.trimStart();
    if (!inBlockString && trimmed.length < line.length && trimmed.startsWith('"')) {
      const previous = lines.at(-1) ?? '';
      if (previous !== '' && !previous.endsWith('{') && !previous.endsWith('(')) lines.push('');
    }
    if ((line.match(/"""/g) ?? []).length % 2 === 1) inBlockString = !inBlockString;
    lines.push(line);
  }
  return lines.join('\n');
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
