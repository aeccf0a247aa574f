import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, INTERNAL_ERROR, toAppError, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../errors.js';
import { fieldErrorsFrom, NUL_IN_BODY } from './validation.js';
import { echo } from '../echo.js';
import { UNSTORABLE_TEXT_MESSAGE } from '../unstorable-text.js';

/**
 * How a route family spells its error bodies. Seed 000 (and most of the API) uses
 * `{error, message}` / `{errors: {...}}`; the tool directory (seed 001) uses `{success: false, message}`;
 * the token routes (seed 002) use `{error, message}` for validation too; `/graphql` answers a request
 * refused before execution as GraphQL does, `{errors: [{message, extensions: {code}}]}`.
 */
export type ErrorStyle = 'standard' | 'directory' | 'plain' | 'graphql';

declare module 'fastify' {
  interface FastifyContextConfig {
    errorStyle?: ErrorStyle;
  }
}

/**
 * Requests Fastify refuses before any route sees them: a path parameter longer than the router
 * allows (its own answer is an undocumented 414), or a path that does not decode. Neither can name a
 * resource, so they are answered 404 `not_found`, in the error style of the route family whose fixed
 * path prefix the request starts with. Pass `handle` as Fastify's `frameworkErrors`, then `install`.
 */
export class FrameworkErrors {
  private readonly styleByPrefix = new Map<string, ErrorStyle>();

  readonly handle = (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const path = request.url.split('?')[0]!;
    let style: ErrorStyle = 'standard';
    let longest = 0;
    for (const [prefix, candidate] of this.styleByPrefix) {
      if (prefix.length > longest && path.startsWith(prefix)) [style, longest] = [candidate, prefix.length];
    }
    request.log.debug({ err: error }, 'request refused by the router');
    return reply.code(404).send(errorBody(new AppError('not_found', 'no such resource: the path does not name one'), style));
  };

  /** Learns each route's style as it is registered (call before the routes are). */
  install(app: FastifyInstance): void {
    app.addHook('onRoute', (route) => {
      const style = (route.config as { errorStyle?: ErrorStyle } | undefined)?.errorStyle;
      if (style) this.styleByPrefix.set(route.url.split(':')[0]!, style);
    });
  }
}

function errorBody(error: AppError, style: ErrorStyle): Record<string, unknown> {
  // GraphQL over HTTP: a request refused before execution (a body that does not parse) still answers
  // in the shape every GraphQL client reads, `errors` as a list.
  if (style === 'graphql') return { errors: [{ message: error.message, extensions: { code: error.code, ...(error.fields ? { errors: error.fields } : {}) } }] };
  if (style === 'directory') return { success: false, message: error.message, ...(error.fields ? { errors: error.fields } : {}) };
  if (style === 'plain') return { error: error.code, message: error.message };
  if (error.code === 'validation') return { errors: error.fields ?? {} };
  return { error: error.code, message: error.message };
}

/** Renders a domain error; the one place REST turns an `AppError` into a response. */
export function sendAppError(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
  const style = request.routeOptions.config?.errorStyle ?? 'standard';
  if (error.code === 'unavailable') reply.header('retry-after', UNAVAILABLE_RETRY_AFTER_SECONDS);
  if (error.retry) {
    reply.header('retry-after', error.retry.afterSeconds);
    const budget = error.retry.budget;
    if (budget) {
      reply.header('ratelimit-policy', `${budget.limit};w=${budget.windowSeconds}`);
      reply.header('ratelimit-limit', budget.limit);
      reply.header('ratelimit-remaining', budget.remaining);
      reply.header('ratelimit-reset', error.retry.afterSeconds);
    }
  }
  return reply.code(error.status).send(errorBody(error, style));
}

const FRAMEWORK_CODES: Record<string, { code: AppError['code']; field?: string; message: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'validation', field: 'body', message: 'must be sent as application/json' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'validation', field: 'body', message: 'must not be empty' },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'validation', field: 'body', message: 'must be valid JSON' },
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'validation', field: 'body', message: 'is too large' },
  [NUL_IN_BODY]: { code: 'validation', field: 'body', message: UNSTORABLE_TEXT_MESSAGE },
};

/**
 * Installs the REST error and not-found handlers: validation → 400 with the field named, domain
 * errors → their status, anything unexpected → a bare 500 (logged in full, nothing leaked).
 */
export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error.validation) {
      const part = error.validationContext ?? 'body';
      return sendAppError(request, reply, AppError.validation(fieldErrorsFrom(error.validation, part)));
    }
    const framework = error.code ? FRAMEWORK_CODES[error.code] : undefined;
    if (framework) {
      const appError = framework.field
        ? AppError.validation({ [framework.field]: framework.message })
        : new AppError(framework.code, framework.message);
      return sendAppError(request, reply, appError);
    }
    const appError = toAppError(error);
    if (appError?.code === 'unavailable') request.log.warn({ err: error }, 'database unavailable');
    if (appError) return sendAppError(request, reply, appError);
    // Any other refusal of the request itself by Fastify or a plugin: the request was wrong.
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      return sendAppError(request, reply, AppError.validation({ request: error.message }));
    }
    request.log.error({ err: error }, 'unhandled error');
    const style = request.routeOptions.config?.errorStyle ?? 'standard';
    return reply.code(INTERNAL_ERROR.status).send(style === 'directory' ? { success: false, message: INTERNAL_ERROR.message } : INTERNAL_ERROR.body);
  });

  app.setNotFoundHandler((request, reply) =>
    sendAppError(request, reply, new AppError('not_found', `no route ${request.method} ${echo(request.url.split('?')[0]!)}`)),
  );
}
