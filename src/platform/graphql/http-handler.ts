import { HeaderMap, type ApolloServer, type BaseContext, type HTTPGraphQLRequest, type HTTPGraphQLResponse } from '@apollo/server';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import type { Actor } from '../auth/actor.js';
import { AppError } from '../errors.js';
import type { Logger } from '../logger.js';
import { formatGraphQLError } from './errors.js';
import { GraphQLError, parse, type GraphQLFormattedError } from 'graphql';
import { acceptsOnlyLegacyJson } from './request-error-status.js';
import type { HttpFastPath } from './http-fast-path.js';
import { GRAPHQL_LIMITS } from './limits.js';
import type { CostPayer } from './operation-costs.js';
import { mayConditionSubscriptionRoot, subscriptionRootConditionErrors } from './subscription-root.js';
import type { TrustedDocuments } from './trusted-documents.js';

/** Who must send trusted documents: the actor kinds (`anonymous`, and the kinds modules add) refused any other. */
export interface TrustedDocumentsPolicy {
  readonly documents: TrustedDocuments;
  readonly requiredFor: ReadonlySet<Actor['kind']>;
}

export interface GraphQLHttpHandlerOptions<Context extends BaseContext & CostPayer> {
  trusted: TrustedDocumentsPolicy;
  context: (request: FastifyRequest) => Promise<Context>;
  log: Logger;
  /** Answers the common request without Apollo's pipeline (http-fast-path.ts); without it, Apollo answers all. */
  fastPath?: HttpFastPath<Context>;
}

const GRAPHQL_RESPONSE_JSON = 'application/graphql-response+json; charset=utf-8';
const JSON_MEDIA_TYPE = 'application/json; charset=utf-8';

/** What names the document of a request: the text, a persisted document id, or an automatic persisted query's hash. */
interface DocumentReference {
  readonly query: string | undefined;
  readonly documentId: string | undefined;
  readonly persistedQueryHash: string | undefined;
}

/**
 * GraphQL over HTTP at one route, through Apollo Server (as @as-integrations/fastify's handler does),
 * with GraphQL over HTTP's persisted documents in front of it: a `documentId` (POST body field or GET
 * query parameter) names a trusted document, whose text Apollo then runs (its parsed and validated
 * form is already in Apollo's document cache). With the operator's setting, callers of the kinds it
 * names may send only trusted documents: a document id, the hash of one (automatic persisted queries),
 * or the text of one; anything else is refused before it is parsed.
 */
export function graphqlHttpHandler<Context extends BaseContext & CostPayer>(apollo: ApolloServer<Context>, options: GraphQLHttpHandlerOptions<Context>) {
  const { documents, requiredFor } = options.trusted;
  return async (request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const search = new URL(request.url, 'http://localhost').search;
    const params = request.method === 'GET' ? new URLSearchParams(search) : undefined;
    const body = request.method === 'POST' && isRecord(request.body) ? request.body : undefined;
    const reference = params ? referenceInSearch(params) : body ? referenceInBody(body) : undefined;

    if (body && 'documentId' in body && typeof body.documentId !== 'string') return refuse(request, reply, AppError.validation({ documentId: 'must be a string' }));
    let httpGraphQLRequest: HTTPGraphQLRequest = { method: request.method.toUpperCase(), headers: headerMap(request), search, body: request.body };
    if (reference?.documentId !== undefined) {
      if (reference.query !== undefined) return refuse(request, reply, AppError.validation({ documentId: 'cannot be sent with query: send one of them' }));
      const trusted = documents.byDocumentId(reference.documentId);
      if (!trusted) {
        return refuse(request, reply, new AppError('persisted_document_not_found', `no trusted document has the id ${reference.documentId.slice(0, 80)}: send one the build published (sha256:<hex> of its text)`));
      }
      httpGraphQLRequest = params
        ? { ...httpGraphQLRequest, search: `?${withQuery(params, trusted.text)}` }
        : { ...httpGraphQLRequest, body: { ...withoutDocumentId(body!), query: trusted.text } };
    } else if (reference && requiredFor.size > 0 && requiredFor.has((await request.actor()).kind) && !isTrusted(reference, documents)) {
      return refuse(
        request,
        reply,
        new AppError('trusted_document_required', 'this server runs only trusted documents for this caller: send the documentId of a document the build published'),
      );
    }

    // Refused here, before Apollo Server's validation, which graphql-js 16 would make throw (subscription-root.ts).
    const text = reference?.query;
    if (text !== undefined && mayConditionSubscriptionRoot(text)) {
      const errors = conditionedSubscriptionRoot(text);
      if (errors.length > 0) return refuseDocument(request, reply, errors);
    }

    const { fastPath } = options;
    const viaApollo = async (context: () => Promise<Context>): Promise<HTTPGraphQLResponse> => {
      const answer = await apollo.executeHTTPGraphQLRequest({ httpGraphQLRequest, context });
      if (fastPath) {
        fastPath.answeredByApollo();
        if (answer.body.kind === 'complete') fastPath.learnMediaType(httpGraphQLRequest.headers.get('accept'), answer.status, answer.headers.get('content-type'));
      }
      return answer;
    };
    const plan = fastPath?.plan(httpGraphQLRequest);
    let response: HTTPGraphQLResponse;
    if (fastPath && plan) {
      let context: Context | undefined;
      try {
        context = await options.context(request);
      } catch {
        // Apollo makes the context again and answers its failure its way.
      }
      const made = context;
      response = made ? await fastPath.answer(httpGraphQLRequest, plan, made, () => viaApollo(async () => made)) : await viaApollo(() => options.context(request));
    } else {
      response = await viaApollo(() => options.context(request));
    }
    for (const [name, value] of response.headers) void reply.header(name, value);
    void reply.code(response.status ?? 200);
    if (response.body.kind === 'complete') return response.body.string;
    return reply.send(Readable.from(response.body.asyncIterator));
  };

  /** A document refused as Apollo Server refuses one that does not validate: 400, or 200 for a client that reads only JSON. */
  function refuseDocument(request: FastifyRequest, reply: FastifyReply, errors: readonly GraphQLError[]): FastifyReply {
    return sendErrors(request, reply, 400, errors.map((error) => formatGraphQLError(error.toJSON(), error, options.log)));
  }

  function refuse(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
    return sendErrors(request, reply, error.status, [formatGraphQLError({ message: error.message }, new GraphQLError(error.message, { originalError: error }), options.log)]);
  }

  function sendErrors(request: FastifyRequest, reply: FastifyReply, status: number, errors: readonly GraphQLFormattedError[]): FastifyReply {
    const accept = request.headers.accept;
    // GraphQL over HTTP: a client that reads only application/json gets its errors with a 200.
    const legacy = acceptsOnlyLegacyJson(accept);
    return reply
      .code(legacy ? 200 : status)
      .header('content-type', !legacy && accept?.includes('application/graphql-response+json') ? GRAPHQL_RESPONSE_JSON : JSON_MEDIA_TYPE)
      .header('cache-control', 'private, no-store')
      .send(JSON.stringify({ errors }));
  }
}

function conditionedSubscriptionRoot(text: string): readonly GraphQLError[] {
  try {
    return subscriptionRootConditionErrors(parse(text, { maxTokens: GRAPHQL_LIMITS.maxTokens }));
  } catch {
    return [];
  }
}

function isTrusted(reference: DocumentReference, documents: TrustedDocuments): boolean {
  if (reference.persistedQueryHash !== undefined) return documents.byTextHash(reference.persistedQueryHash) !== undefined;
  return reference.query !== undefined && documents.matching(reference.query) !== undefined;
}

function referenceInBody(body: Record<string, unknown>): DocumentReference | undefined {
  return reference(body.query, body.documentId, body.extensions);
}

function referenceInSearch(params: URLSearchParams): DocumentReference | undefined {
  let extensions: unknown;
  try {
    extensions = params.has('extensions') ? JSON.parse(params.get('extensions')!) : undefined;
  } catch {
    extensions = undefined; // Apollo answers that one
  }
  return reference(params.get('query') ?? undefined, params.get('documentId') ?? undefined, extensions);
}

function reference(query: unknown, documentId: unknown, extensions: unknown): DocumentReference | undefined {
  const persisted = isRecord(extensions) && isRecord(extensions.persistedQuery) ? extensions.persistedQuery.sha256Hash : undefined;
  if (typeof query !== 'string' && typeof documentId !== 'string' && typeof persisted !== 'string') return undefined;
  return {
    query: typeof query === 'string' ? query : undefined,
    documentId: typeof documentId === 'string' ? documentId : undefined,
    persistedQueryHash: typeof persisted === 'string' ? persisted : undefined,
  };
}

function withQuery(params: URLSearchParams, query: string): string {
  const rewritten = new URLSearchParams(params);
  rewritten.delete('documentId');
  rewritten.set('query', query);
  return rewritten.toString();
}

function withoutDocumentId(body: Record<string, unknown>): Record<string, unknown> {
  const { documentId: _documentId, ...rest } = body;
  return rest;
}

function headerMap(request: FastifyRequest): HeaderMap {
  const map = new HeaderMap();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) map.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return map;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
