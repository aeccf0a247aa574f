import { randomUUID } from 'node:crypto';
import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  execute,
  getOperationAST,
  GraphQLError,
  Kind,
  parse,
  validate,
  visit,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type ValidationRule,
} from 'graphql';
import { createHandler, type OperationArgs, type Request as SseRequest, type Response as SseResponse } from 'graphql-sse';
import { AppError } from '../errors.js';
import { addressKey } from '../http/client-address.js';
import type { Logger } from '../logger.js';
import { AdmissionRefusal } from './cost-budget.js';
import { subscriptionRootConditionErrors } from './subscription-root.js';
import type { TrustedDocumentsPolicy } from './http-handler.js';
import { unstorableVariablesError } from './input-rules.js';
import { platformContextOf } from './http-context.js';
import { GRAPHQL_LIMITS, type ConnectionCounter } from './limits.js';
import type { Charge, OperationCosts } from './operation-costs.js';
import type { PlatformContext } from './server.js';
import { subscribeSharingExecution } from './shared-execution.js';

/** GraphQL over Server-Sent Events (graphql-sse's protocol), both of its modes, at this path. */
export const GRAPHQL_SSE_PATH = '/graphql/stream';

const STREAM_TOKEN_HEADER = 'x-graphql-event-stream-token';
const STREAM_TOKEN_PARAMETER = 'token';

/**
 * A subscription whose events can be resumed: its events' `cursorField` is written as each SSE event's
 * `id`, and a request that comes back with `Last-Event-ID` (as EventSource does, or a graphql-sse client
 * told to) gets that id as the field's `argument`, when the document does not set it itself.
 */
export interface ResumableSubscription {
  readonly field: string;
  readonly argument: string;
  readonly cursorField: string;
}

export interface SseOptions<Context extends PlatformContext> {
  schema: GraphQLSchema;
  /** The validation rules of every transport (graphql-js's and graphql-armor's). */
  rules: readonly ValidationRule[];
  buildContext: (base: PlatformContext) => Context;
  runInScope: <T>(operation: () => T) => T;
  trusted: TrustedDocumentsPolicy;
  costs: OperationCosts;
  /** Shared with graphql-ws: a client's sockets and streams count together. */
  connectionsPerAddress: ConnectionCounter;
  connectionsPerCredential: ConnectionCounter;
  resumable: readonly ResumableSubscription[];
  /** A result as clients get it: errors formatted (and logged) as over HTTP. */
  payloadOf: (result: ExecutionResult) => ExecutionResult;
  viewerKey: (contextValue: unknown) => string;
  log: Logger;
}

/** graphql-sse's operation context type: the platform context, seen as a record. */
type SseContext = Record<PropertyKey, unknown>;
const asSseContext = (context: PlatformContext): SseContext => context as unknown as SseContext;

/** A reservation of single connection mode: who made it, and what it holds. */
interface Reservation {
  readonly owner: string;
  readonly address: string;
  readonly credential: string | undefined;
  operations: number;
  opened: boolean;
  expiry: NodeJS.Timeout | undefined;
}

/**
 * GraphQL over SSE with graphql-sse (by the author of graphql-ws): queries, mutations and subscriptions,
 * in distinct connections mode (one `text/event-stream` request per operation) and single connection
 * mode (PUT reserves a stream, GET opens it, POSTs add operations, DELETE stops one). What holds over
 * graphql-ws holds here: the credential comes in the request headers (each request of a reservation
 * must carry the one that made it), documents are bounded by the same parse and validation rules
 * (tokens, depth, aliases, armor's cost), trusted documents and GraphQL cost budgets apply, a client's
 * open streams count with its sockets per address and per credential, a stream holds at most
 * `maxOperationsPerSocket` operations, and errors have GraphQL's shape with the REST codes.
 */
export function registerGraphQLOverSse<Context extends PlatformContext>(app: FastifyInstance, options: SseOptions<Context>): void {
  const { schema, rules, costs, log } = options;
  const reservations = new Map<string, Reservation>();
  const openStreams = new Set<AsyncGenerator<string, void, undefined>>();
  const charges = new WeakMap<object, Charge>();
  const contexts = new WeakMap<object, SseContext>();
  /** The graphql-sse request made by the server itself to dispose of a reservation nobody opened. */
  const INTERNAL = Symbol('internal');

  const contextOf = (request: FastifyRequest): SseContext => {
    let context = contexts.get(request);
    if (!context) {
      context = asSseContext(options.buildContext(platformContextOf(request)));
      contexts.set(request, context);
    }
    return context;
  };
  const ownerOf = (request: FastifyRequest) => (request.credential.kind === 'token' ? `credential:${request.credential.token}` : `address:${addressKey(request.ip)}`);
  const refusal = (error: AppError): ExecutionResult => requestErrors([new GraphQLError(error.message, { originalError: error })]);

  const handler = createHandler<FastifyRequest | typeof INTERNAL, undefined, SseContext>({
    schema,
    // Validated in onSubscribe, with every rule.
    validate: () => [],
    authenticate: (req) => {
      const token = req.headers.get(STREAM_TOKEN_HEADER) ?? new URL(req.url, 'http://localhost').searchParams.get(STREAM_TOKEN_PARAMETER);
      if (req.raw === INTERNAL) return token;
      const request = req.raw;
      if (token) {
        const reservation = reservations.get(token);
        // graphql-sse's client reserves again with the token of its last stream: a token that names no
        // reservation may be reserved anew (by PUT only; tokens are opaque, at most 128 characters).
        if (!reservation && req.method === 'PUT' && /^[\w-]{1,128}$/.test(token)) return token;
        // A reservation answers only to the credential (or address) that made it: the token alone is not enough.
        if (!reservation || reservation.owner !== ownerOf(request)) return jsonResponse(404, new AppError('not_found', 'no stream is reserved with this token for this caller'));
        return token;
      }
      return req.method === 'PUT' ? randomUUID() : undefined;
    },
    context: (req) => contextOf(req.raw as FastifyRequest),
    onSubscribe: async (req, params) => {
      const request = req.raw as FastifyRequest;
      const context = contextOf(request);
      const platform = context as unknown as PlatformContext;
      const token = req.headers.get(STREAM_TOKEN_HEADER);
      const reservation = token ? reservations.get(token) : undefined;
      if (reservation) {
        if (reservation.operations >= GRAPHQL_LIMITS.maxOperationsPerSocket) {
          return jsonResponse(409, new AppError('limit_exceeded', `more than ${GRAPHQL_LIMITS.maxOperationsPerSocket} operations at once on one stream`));
        }
        reservation.operations++;
      }
      const { documents, requiredFor } = options.trusted;
      if (requiredFor.size > 0 && requiredFor.has((await platform.actor()).kind) && !documents.matching(params.query)) {
        return refusal(new AppError('trusted_document_required', 'this server runs only trusted documents for this caller: send the text of a document the build published'));
      }
      let document: DocumentNode;
      try {
        document = parse(params.query, { maxTokens: GRAPHQL_LIMITS.maxTokens });
      } catch (error) {
        if (error instanceof GraphQLError) return requestErrors([error]);
        throw error;
      }
      const conditioned = subscriptionRootConditionErrors(document);
      if (conditioned.length > 0) return requestErrors(conditioned);
      const errors = validate(schema, document, rules, { maxErrors: GRAPHQL_LIMITS.maxErrorsPerAnswer - 1 });
      if (errors.length > 0) return requestErrors(errors);
      const unstorable = unstorableVariablesError(params.variables);
      if (unstorable) return requestErrors([unstorable]);
      const operation = getOperationAST(document, params.operationName);
      if (!operation) return requestErrors([new GraphQLError('the document names no operation to run (operationName)')]);
      let variableValues = params.variables ?? undefined;
      const lastEventId = req.headers.get('last-event-id');
      if (lastEventId && operation.operation === 'subscription') ({ document, variableValues } = resumed(document, operation, variableValues, lastEventId, options.resumable));
      const resolvedOperation = getOperationAST(document, params.operationName)!;
      try {
        charges.set(context, await costs.admit(platform, document, resolvedOperation, variableValues));
      } catch (error) {
        if (error instanceof AdmissionRefusal) return refusal(error);
        throw error;
      }
      return {
        schema,
        document,
        contextValue: context,
        ...(params.operationName ? { operationName: params.operationName } : {}),
        ...(variableValues ? { variableValues } : {}),
      } satisfies OperationArgs<SseContext>;
    },
    execute: (args: ExecutionArgs) => options.runInScope(() => execute(args)),
    subscribe: (args: ExecutionArgs) => options.runInScope(() => subscribeSharingExecution(args, { viewerKey: options.viewerKey, payloadOf: options.payloadOf, runInScope: options.runInScope })),
    onNext: (ctx, _req, result) => {
      const payload = options.payloadOf(result as ExecutionResult);
      const charge = ctx ? charges.get(ctx) : undefined;
      // A query or mutation answers once, with its cost; a subscription's events carry none.
      if (!charge || charge.operation.operation === 'subscription') return payload;
      charges.delete(ctx!);
      return { ...payload, extensions: { ...payload.extensions, cost: costs.settle(charge, payload.data) } };
    },
    onComplete: (_ctx, req) => {
      const token = req.headers.get(STREAM_TOKEN_HEADER);
      const reservation = token ? reservations.get(token) : undefined;
      if (reservation) reservation.operations = Math.max(0, reservation.operations - 1);
    },
  });

  const serve = async (request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const opensStream = request.headers.accept === 'text/event-stream';
    const token = (request.headers[STREAM_TOKEN_HEADER] as string | undefined) ?? new URL(request.url, 'http://localhost').searchParams.get(STREAM_TOKEN_PARAMETER) ?? undefined;
    const reservation = token ? reservations.get(token) : undefined;
    // A distinct stream, or a reservation, takes a place among the caller's connections; opening a
    // reserved stream uses the reservation's.
    const takesPlace = (opensStream && !reservation) || (request.method === 'PUT' && !reservation);
    const places = takesPlace ? acquire(request) : { address: addressKey(request.ip), credential: undefined };
    if (!places) return sendJson(reply, 409, new AppError('limit_exceeded', 'too many open GraphQL connections (WebSocket and SSE) from this address or with this credential'));
    let streaming = false;
    try {
      const [body, init] = await handler(sseRequest(request));
      if (request.method === 'PUT' && init.status === 201 && typeof body === 'string') {
        const made: Reservation = { owner: ownerOf(request), ...places, operations: 0, opened: false, expiry: undefined };
        // A reservation nobody opens does not stay: its place and its stream go after the init wait.
        made.expiry = setTimeout(() => void disposeUnopened(body), GRAPHQL_LIMITS.connectionInitWaitMs);
        reservations.set(body, made);
        streaming = true; // the place is the reservation's now
      }
      if (!body || typeof body === 'string') {
        void reply.code(init.status).headers(init.headers ?? {});
        return reply.send(body ?? '');
      }
      if (reservation) {
        reservation.opened = true;
        clearTimeout(reservation.expiry);
      }
      streaming = true;
      reply.hijack();
      reply.raw.writeHead(init.status, { ...(reply.getHeaders() as OutgoingHttpHeaders), ...init.headers });
      openStreams.add(body);
      reply.raw.once('close', () => void body.return(undefined));
      try {
        for await (const message of body) if (!reply.raw.destroyed) reply.raw.write(withEventId(message, options.resumable));
      } catch (error) {
        log.warn({ err: error }, 'GraphQL SSE stream failed');
      } finally {
        openStreams.delete(body);
        reply.raw.end();
        request.handlerDone();
        release(reservation ?? places);
        if (token) reservations.delete(token);
      }
      return reply;
    } finally {
      if (!streaming && takesPlace) release(places);
    }
  };

  const disposeUnopened = async (token: string): Promise<void> => {
    const reservation = reservations.get(token);
    if (!reservation || reservation.opened) return;
    reservations.delete(token);
    release(reservation);
    // graphql-sse keeps a reserved stream until it is opened and closed: open it here, and close it.
    const [body] = await handler({ method: 'GET', url: `${GRAPHQL_SSE_PATH}?${STREAM_TOKEN_PARAMETER}=${token}`, headers: { get: (name) => (name === 'accept' ? 'text/event-stream' : name === STREAM_TOKEN_HEADER ? token : null) }, body: null, raw: INTERNAL, context: undefined });
    if (body && typeof body !== 'string') await body.return(undefined);
  };

  function acquire(request: FastifyRequest): { address: string; credential: string | undefined } | undefined {
    const address = addressKey(request.ip);
    if (!options.connectionsPerAddress.acquire(address)) return undefined;
    const credential = request.credential.kind === 'token' ? request.credential.token : undefined;
    if (credential !== undefined && !options.connectionsPerCredential.acquire(credential)) {
      options.connectionsPerAddress.release(address);
      return undefined;
    }
    return { address, credential };
  }

  function release(places: { address: string; credential: string | undefined } | undefined): void {
    if (!places) return;
    options.connectionsPerAddress.release(places.address);
    if (places.credential !== undefined) options.connectionsPerCredential.release(places.credential);
  }

  app.route({
    method: ['GET', 'POST', 'PUT', 'DELETE'],
    url: GRAPHQL_SSE_PATH,
    schema: { hide: true },
    // A stream's operation is one message: the same bound as a graphql-ws message.
    bodyLimit: GRAPHQL_LIMITS.maxMessageBytes,
    config: { errorStyle: 'graphql' },
    handler: serve,
  });

  // On shutdown every stream ends (the clients reconnect elsewhere and resume with Last-Event-ID).
  app.addHook('preClose', async () => {
    for (const reservation of reservations.values()) clearTimeout(reservation.expiry);
    await Promise.all([...openStreams].map((stream) => stream.return(undefined)));
  });
}

function sseRequest(request: FastifyRequest): SseRequest<FastifyRequest, undefined> {
  return {
    method: request.method,
    url: request.url,
    headers: {
      get: (name) => {
        const value = request.headers[name.toLowerCase()];
        return Array.isArray(value) ? value.join(', ') : (value ?? null);
      },
    },
    body: (request.body as Record<PropertyKey, unknown> | string | undefined) ?? null,
    raw: request,
    context: undefined,
  };
}

/**
 * Errors in the request itself, as graphql-sse streams a result: it recognises a result by its `data`
 * key, which stays undefined (and so out of the JSON), as GraphQL wants for request errors.
 */
function requestErrors(errors: readonly GraphQLError[]): ExecutionResult {
  return { data: undefined, errors } as unknown as ExecutionResult;
}

function jsonResponse(status: number, error: AppError): SseResponse {
  return [JSON.stringify({ errors: [{ message: error.message, extensions: { code: error.code } }] }), { status, statusText: '', headers: { 'content-type': 'application/json; charset=utf-8' } }];
}

function sendJson(reply: FastifyReply, status: number, error: AppError): FastifyReply {
  return reply.code(status).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify({ errors: [{ message: error.message, extensions: { code: error.code } }] }));
}

/**
 * The document and variables with `Last-Event-ID` as the resumable field's cursor argument: through
 * the variable the document uses for it when unset, or as an argument the document does not give.
 */
function resumed(
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variableValues: Record<string, unknown> | undefined,
  lastEventId: string,
  resumable: readonly ResumableSubscription[],
): { document: DocumentNode; variableValues: Record<string, unknown> | undefined } {
  const root = operation.selectionSet.selections.find((selection) => selection.kind === Kind.FIELD);
  const target = root && resumable.find((candidate) => candidate.field === root.name.value);
  if (!root || !target) return { document, variableValues };
  const given = root.arguments?.find((argument) => argument.name.value === target.argument);
  if (given) {
    if (given.value.kind !== Kind.VARIABLE || variableValues?.[given.value.name.value] != null) return { document, variableValues };
    return { document, variableValues: { ...variableValues, [given.value.name.value]: lastEventId } };
  }
  const withArgument = visit(document, {
    Field: (node) =>
      node === root
        ? { ...node, arguments: [...(node.arguments ?? []), { kind: Kind.ARGUMENT, name: { kind: Kind.NAME, value: target.argument }, value: { kind: Kind.STRING, value: lastEventId } }] }
        : undefined,
  });
  return { document: withArgument, variableValues };
}

/** A `next` event of a resumable subscription gets its cursor as the SSE event id. */
function withEventId(message: string, resumable: readonly ResumableSubscription[]): string {
  if (!message.startsWith('event: next\ndata: ') || resumable.length === 0) return message;
  let data: { payload?: { data?: Record<string, unknown> }; data?: Record<string, unknown> };
  try {
    data = JSON.parse(message.slice('event: next\ndata: '.length)) as typeof data;
  } catch {
    return message;
  }
  const result = data.payload ?? data;
  for (const { field, cursorField } of resumable) {
    const cursor = (result.data?.[field] as Record<string, unknown> | undefined)?.[cursorField];
    // An id holds no line break (it would end the field); cursors are digits.
    if (typeof cursor === 'string' && !/[\r\n]/.test(cursor)) return `id: ${cursor}\n${message}`;
  }
  return message;
}
