import { unwrapResolverError } from '@apollo/server/errors';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { toAppError } from '../errors.js';
import type { Logger } from '../logger.js';

/**
 * Formats every GraphQL error, over HTTP and WebSocket alike: domain errors carry their REST code in
 * `extensions.code` (validation adds `extensions.errors`, the REST field map); errors about the request
 * itself (syntax, unknown fields, variable types) reach the client as they are; anything else is
 * logged and answered as `INTERNAL_SERVER_ERROR` with nothing leaked.
 */
export function formatGraphQLError(formatted: GraphQLFormattedError, error: unknown, log: Logger): GraphQLFormattedError {
  const original = unwrapResolverError(error);
  const where = {
    ...(formatted.locations ? { locations: formatted.locations } : {}),
    ...(formatted.path ? { path: formatted.path } : {}),
  };
  const appError = toAppError(original);
  if (appError) {
    return {
      message: appError.message,
      ...where,
      extensions: { code: appError.code, ...(appError.fields ? { errors: appError.fields } : {}) },
    };
  }
  // graphql-js raises these for the document and variables; they carry no hidden cause.
  if (original instanceof GraphQLError && !original.originalError) {
    const code = typeof formatted.extensions?.code === 'string' ? formatted.extensions.code : 'GRAPHQL_VALIDATION_FAILED';
    return { message: formatted.message, ...where, extensions: { code } };
  }
  log.error({ err: original }, 'unhandled GraphQL error');
  return { message: 'Internal server error', ...where, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
}
