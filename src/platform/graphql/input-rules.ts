import type { ApolloServerPlugin, GraphQLRequestListener } from '@apollo/server';
import { GraphQLError, type ASTVisitor, type ValidationContext } from 'graphql';
import { holdsNul, nulPathIn, UNSTORABLE_TEXT_MESSAGE } from '../unstorable-text.js';
import { GRAPHQL_LIMITS } from './limits.js';

/**
 * What a document and its variables may hold before anything runs, over HTTP and WebSocket alike:
 * the same refusals as the REST routes' (no U+0000 anywhere a string can be), and names of a
 * bounded length (an alias or an unknown field name is repeated in the answer).
 */

/** Validation rule: no string literal of the document (an argument, a default value) holds U+0000. */
export function StorableStringLiteralsRule(context: ValidationContext): ASTVisitor {
  return {
    StringValue(node) {
      if (holdsNul(node.value)) context.reportError(new GraphQLError(`A string literal ${UNSTORABLE_TEXT_MESSAGE} (NUL): no stored text can hold it.`, { nodes: node }));
    },
  };
}

/** Validation rule: every name (field, alias, argument, variable, fragment, operation) is at most `maxNameLength` characters. */
export function NameLengthRule(context: ValidationContext): ASTVisitor {
  return {
    Name(node) {
      if (node.value.length > GRAPHQL_LIMITS.maxNameLength) {
        context.reportError(new GraphQLError(`A name is longer than ${GRAPHQL_LIMITS.maxNameLength} characters.`, { nodes: node }));
      }
    },
  };
}

export const INPUT_RULES = [StorableStringLiteralsRule, NameLengthRule] as const;

/** The refusal of variables holding U+0000 (BAD_USER_INPUT, as graphql-js's own variable errors), or undefined. */
export function unstorableVariablesError(variables: Readonly<Record<string, unknown>> | null | undefined): GraphQLError | undefined {
  if (!variables) return undefined;
  for (const [name, value] of Object.entries(variables)) {
    const at = nulPathIn(value, name);
    if (at !== undefined) {
      return new GraphQLError(`Variable "$${name}" at "${at}" ${UNSTORABLE_TEXT_MESSAGE} (NUL): no stored text can hold it.`, {
        extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } },
      });
    }
  }
  return undefined;
}

/**
 * Refuses variables holding U+0000 before execution. A POST body holding one is refused whole by the
 * JSON parser already; this covers variables sent in a GET's query string.
 */
export function storableVariablesPlugin<Context extends object>(): ApolloServerPlugin<Context> {
  const listener: GraphQLRequestListener<Context> = {
    async didResolveOperation({ request }) {
      const refusal = unstorableVariablesError(request.variables);
      if (refusal) throw refusal;
    },
  };
  return { requestDidStart: async () => listener };
}
