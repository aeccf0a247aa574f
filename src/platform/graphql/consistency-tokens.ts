import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import { defaultFieldResolver, type GraphQLSchema } from 'graphql';
import { answeredToken, writingNow, type ReadYourWrites } from '../db/read-your-writes.js';
import type { PlatformContext } from './server.js';

/**
 * Every mutation field marks its operation as writing (the reads after it stay on the primary) and,
 * once it has resolved (its transaction committed), takes the consistency token: remembered for the
 * caller's credential, over HTTP also answered (header and `extensions.consistencyToken`, see the
 * plugin below). Over graphql-ws there is no request around the operation: the token is remembered
 * for the connection's credential, so the caller's next reads anywhere see the write.
 */
export function answerTokensAfterMutations(schema: GraphQLSchema, consistency: ReadYourWrites): GraphQLSchema {
  for (const field of Object.values(schema.getMutationType()?.getFields() ?? {})) {
    const resolve = field.resolve ?? defaultFieldResolver;
    field.resolve = async (source, args, context: PlatformContext, info) => {
      writingNow();
      const result: unknown = await resolve(source, args, context, info);
      await consistency.afterWrite(context.credential);
      return result;
    };
  }
  return schema;
}

/** Puts the token of the operation's last write into the response's extensions (`consistencyToken`) and header. */
export function consistencyTokenPlugin<Context extends BaseContext>(): ApolloServerPlugin<Context> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ response }) {
          const token = answeredToken();
          if (token === undefined) return;
          response.http.headers.set('x-consistency-token', token);
          if (response.body.kind === 'single') {
            response.body.singleResult.extensions = { ...response.body.singleResult.extensions, consistencyToken: token };
          }
        },
      };
    },
  };
}
