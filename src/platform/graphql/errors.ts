import type { ApolloServerPlugin, GraphQLRequestListener } from '@apollo/server';
import { unwrapResolverError } from '@apollo/server/errors';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { boundMessage } from '../echo.js';
import { INTERNAL_ERROR, toAppError } from '../errors.js';
import type { Logger } from '../logger.js';
import { GRAPHQL_LIMITS } from './limits.js';
import { CostRefusal } from './cost-budget.js';

// Apollo's codes for errors in the request itself: the client's to see.
const CLIENT_ERROR_CODES = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'OPERATION_RESOLUTION_FAILURE',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
]);

/**
 * Formats every GraphQL error, over HTTP and WebSocket alike: domain errors carry their REST code in
 * `extensions.code` (validation adds `extensions.errors`, the REST field map); errors about the request
 * itself (syntax, unknown fields, variable types) reach the client as they are; anything else is
 * logged and answered as `INTERNAL_SERVER_ERROR` with nothing leaked.
 */
export function formatGraphQLError(formatted: GraphQLFormattedError, error: unknown, log: Logger): GraphQLFormattedError {
  // Errors raised while setting up a subscription stream carry their cause without a path.
  const unwrapped = unwrapResolverError(error);
  const original = unwrapped instanceof GraphQLError && unwrapped.originalError ? unwrapped.originalError : unwrapped;
  const where = {
    ...(formatted.locations ? { locations: formatted.locations } : {}),
    ...(formatted.path ? { path: formatted.path } : {}),
  };
  const appError = toAppError(original);
  if (appError?.code === 'unavailable') log.warn({ err: original }, 'database unavailable');
  if (appError) {
    return {
      message: appError.message,
      ...where,
      extensions: {
        code: appError.code,
        ...(appError.fields ? { errors: appError.fields } : {}),
        ...(appError.retry ? { retryAfterSeconds: appError.retry.afterSeconds } : {}),
        ...(appError instanceof CostRefusal ? appError.extensions : {}),
      },
    };
  }
  const code = formatted.extensions?.code;
  // graphql-js quotes whole values it could not coerce and names it does not know: bounded (echo.ts).
  if (typeof code === 'string' && CLIENT_ERROR_CODES.has(code)) {
    return { message: boundMessage(formatted.message), ...where, extensions: { code } };
  }
  // graphql-js raises these for the document and variables (as graphql-ws reports them); no hidden cause.
  if (unwrapped instanceof GraphQLError && !unwrapped.originalError) {
    return { message: boundMessage(formatted.message), ...where, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } };
  }
  // A variable graphql-js could not coerce (graphql-ws; over HTTP Apollo has marked it already): its
  // error wraps graphql-js's own, and no field has run yet. It was an internal error before.
  if (unwrapped instanceof GraphQLError && unwrapped.originalError instanceof GraphQLError && !formatted.path) {
    return { message: boundMessage(formatted.message), ...where, extensions: { code: 'BAD_USER_INPUT' } };
  }
  log.error({ err: original }, 'unhandled GraphQL error');
  return { message: INTERNAL_ERROR.message, ...where, extensions: { code: INTERNAL_ERROR.graphqlCode } };
}

/**
 * At most `maxErrorsPerAnswer` errors in one answer, the last of them saying how many more there were
 * (graphql-js stops validation there too, but reports up to 50 variable errors, and execution has no limit).
 */
export function capErrors<Formatted extends GraphQLFormattedError>(errors: readonly Formatted[]): readonly (Formatted | GraphQLFormattedError)[] {
  const max = GRAPHQL_LIMITS.maxErrorsPerAnswer;
  if (errors.length <= max) return errors;
  const left = errors.slice(max - 1);
  return [
    ...errors.slice(0, max - 1),
    { message: `${left.length} more errors; only the first ${max - 1} are shown.`, extensions: { code: left[0]!.extensions?.code ?? 'GRAPHQL_VALIDATION_FAILED' } },
  ];
}

/** Caps the errors of every HTTP answer (capErrors). */
export function capErrorsPlugin<Context extends object>(): ApolloServerPlugin<Context> {
  const listener: GraphQLRequestListener<Context> = {
    async willSendResponse({ response }) {
      if (response.body.kind === 'single' && response.body.singleResult.errors) {
        response.body.singleResult.errors = capErrors(response.body.singleResult.errors);
      }
    },
  };
  return { requestDidStart: async () => listener };
}
