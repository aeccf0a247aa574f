import { unwrapResolverError } from '@apollo/server/errors';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { INTERNAL_ERROR, toAppError } from '../errors.js';
import type { Logger } from '../logger.js';
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
      extensions: { code: appError.code, ...(appError.fields ? { errors: appError.fields } : {}), ...(appError instanceof CostRefusal ? appError.extensions : {}) },
    };
  }
  const code = formatted.extensions?.code;
  if (typeof code === 'string' && CLIENT_ERROR_CODES.has(code)) {
    return { message: formatted.message, ...where, extensions: { code } };
  }
  // graphql-js raises these for the document and variables (as graphql-ws reports them); no hidden cause.
  if (unwrapped instanceof GraphQLError && !unwrapped.originalError) {
    return { message: formatted.message, ...where, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } };
  }
  log.error({ err: original }, 'unhandled GraphQL error');
  return { message: INTERNAL_ERROR.message, ...where, extensions: { code: INTERNAL_ERROR.graphqlCode } };
}
