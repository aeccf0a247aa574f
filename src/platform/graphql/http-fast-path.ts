import { HeaderMap, type ApolloServerPlugin, type BaseContext, type GraphQLRequestContext, type GraphQLRequestListener, type HTTPGraphQLRequest, type HTTPGraphQLResponse } from '@apollo/server';
import { getOperationAST, type DocumentNode, type ExecutionResult, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { LRUCache } from 'lru-cache';
import type { CounterSeries } from '../metrics/families.js';
import type { CompiledOperations } from './compiled-operations.js';
import { handOver } from './handed-over.js';
import { unstorableVariablesError } from './input-rules.js';
import type { Charge, CostPayer, OperationCosts } from './operation-costs.js';
import { VALIDATED_DOCUMENTS } from './validated-documents.js';

interface KnownDocument {
  readonly document: DocumentNode;
  /** Apollo's `queryHash` of the text (SHA-256): the key compiled operations and cache policies are kept under. */
  readonly queryHash: string;
}

/** The hooks the direct path runs, in Apollo's order; a listener with any other is answered by Apollo. */
const UNSUPPORTED_HOOKS = ['didResolveSource', 'parsingDidStart', 'validationDidStart', 'responseForOperation', 'executionDidStart', 'didEncounterErrors'] as const;

/** Distinct `Accept` values whose answer's media type Apollo has shown (beyond them, Apollo answers). */
export const MAX_ACCEPT_VALUES = 100;

/** An answer as Apollo's `executeHTTPGraphQLRequest` gives it. */
export type HttpAnswer = HTTPGraphQLResponse;

export interface HttpFastPathOptions<Context extends BaseContext & CostPayer> {
  schema: GraphQLSchema;
  /** The request plugins Apollo runs (every one of Apollo's plugins that has request hooks). */
  plugins: readonly ApolloServerPlugin<Context>[];
  costs: OperationCosts;
  operations: CompiledOperations;
  /** Counts HTTP operations by who answered them. */
  answers: { direct: CounterSeries; apollo: CounterSeries };
}

/**
 * GraphQL over HTTP without Apollo Server's request pipeline, for the common request: a POST of a query
 * whose text Apollo has already parsed and validated (or a trusted document's), with no extensions,
 * variables that may be stored, and an `Accept` header Apollo has answered before. It runs the same
 * pieces Apollo's pipeline runs, in its order: the request plugins (`requestDidStart`,
 * `didResolveOperation`, `willSendResponse`: cost, cache policy, operation metrics, consistency tokens,
 * error caps, status), the cost budget, and the same executor (compiled operations, with their span and
 * metrics); its answer is Apollo's serialisation of the result. Whatever else can happen goes to Apollo:
 * a text not seen yet, a mutation, a refusal, an answer with errors (formatted by Apollo, having run
 * once: see HandedOver).
 *
 * Why: in bench S3 (a 50-row page) Apollo's pipeline — hashing the text, the document store's lookup,
 * a promise per plugin per hook, content negotiation twice — cost more CPU than the page's execution.
 */
export class HttpFastPath<Context extends BaseContext & CostPayer> {
  private readonly known = new LRUCache<string, KnownDocument>({
    max: VALIDATED_DOCUMENTS.maxEntries,
    maxSize: VALIDATED_DOCUMENTS.maxQueryChars,
    sizeCalculation: (_known, query) => Math.max(1, query.length),
  });
  /** The media type Apollo answered a successful operation with, by the request's `Accept` (absent: ''). */
  private readonly mediaTypes = new Map<string, string>();

  constructor(private readonly options: HttpFastPathOptions<Context>) {}

  /** A trusted document, validated at start: its text runs directly from the first request. */
  trust(query: string, document: DocumentNode, queryHash: string): void {
    this.known.set(query, { document, queryHash });
  }

  /** The Apollo plugin that learns the texts Apollo parsed and validated, with their document and hash. */
  readonly learning: ApolloServerPlugin<Context> = (() => {
    const listener: GraphQLRequestListener<Context> = {
      didResolveOperation: async ({ source, document, queryHash, operation }) => {
        if (operation && source !== undefined && !this.known.has(source)) this.known.set(source, { document, queryHash });
      },
    };
    return { requestDidStart: async () => listener };
  })();

  /** After Apollo answered a request: a 200 with a body is the media type a direct answer to that `Accept` gets. */
  learnMediaType(accept: string | undefined, status: number | undefined, contentType: string | undefined): void {
    if ((status ?? 200) !== 200 || contentType === undefined) return;
    const key = accept ?? '';
    if (this.mediaTypes.has(key) || this.mediaTypes.size >= MAX_ACCEPT_VALUES) return;
    this.mediaTypes.set(key, contentType);
  }

  /**
   * Answers the request directly, or hands it to Apollo (`viaApollo`, with what was done so far on the
   * context). Undefined from `plan` means Apollo answers it from the start.
   */
  plan(http: HTTPGraphQLRequest): DirectPlan | undefined {
    if (http.method !== 'POST') return undefined;
    const body = http.body as Record<string, unknown> | null | undefined;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
    const { query, operationName, variables } = body;
    if (typeof query !== 'string' || body.extensions !== undefined) return undefined;
    if (operationName != null && typeof operationName !== 'string') return undefined;
    if (variables != null && (typeof variables !== 'object' || Array.isArray(variables))) return undefined;
    const mediaType = this.mediaTypes.get(http.headers.get('accept') ?? '');
    if (mediaType === undefined) return undefined;
    const known = this.known.get(query);
    if (!known) return undefined;
    const operation = getOperationAST(known.document, operationName ?? undefined);
    if (!operation || operation.operation !== 'query') return undefined;
    const given = (variables ?? undefined) as Record<string, unknown> | undefined;
    // Refused by the storable-variables plugin: Apollo answers that.
    if (unstorableVariablesError(given)) return undefined;
    return { query, operationName: typeof operationName === 'string' ? operationName : undefined, variables: given, known, operation, mediaType };
  }

  async answer(http: HTTPGraphQLRequest, plan: DirectPlan, contextValue: Context, viaApollo: () => Promise<HttpAnswer>): Promise<HttpAnswer> {
    const { known, operation } = plan;
    let charge: Charge;
    try {
      charge = await this.options.costs.admit(contextValue, known.document, operation, plan.variables);
    } catch (error) {
      // Refused (over budget, or not costable), or the budget failing: Apollo's cost plugin throws it, and Apollo answers it.
      handOver(contextValue, { notAdmitted: { error } });
      return viaApollo();
    }
    handOver(contextValue, { charge });
    const requestContext = {
      logger: undefined,
      cache: undefined,
      schema: this.options.schema,
      request: {
        query: plan.query,
        ...(plan.operationName !== undefined ? { operationName: plan.operationName } : {}),
        ...(plan.variables !== undefined ? { variables: plan.variables } : {}),
        http,
      },
      response: { http: { headers: new HeaderMap(), status: undefined as number | undefined } },
      contextValue,
      metrics: {},
      requestIsBatched: false,
      queryHash: known.queryHash,
      source: plan.query,
      document: known.document,
      operation,
      operationName: operation.name?.value ?? null,
    } as unknown as GraphQLRequestContext<Context> & { response: { http: { headers: HeaderMap; status: number | undefined }; body?: unknown } };
    const listeners = (await Promise.all(this.options.plugins.map((plugin) => plugin.requestDidStart?.(requestContext)))).filter(
      (listener): listener is GraphQLRequestListener<Context> => listener !== undefined && listener !== null,
    );
    if (listeners.some((listener) => UNSUPPORTED_HOOKS.some((hook) => listener[hook] !== undefined))) return viaApollo();
    try {
      await Promise.all(listeners.map((listener) => listener.didResolveOperation?.(requestContext as Parameters<NonNullable<GraphQLRequestListener<Context>['didResolveOperation']>>[0])));
    } catch {
      // Apollo runs the same hooks, which refuse the same way, and answers that refusal its way.
      return viaApollo();
    }
    let result: ExecutionResult;
    try {
      result = await this.options.operations.execute({
        documentKey: known.queryHash,
        document: known.document,
        operationName: plan.operationName,
        operation,
        contextValue,
        variableValues: plan.variables,
      });
    } catch (error) {
      handOver(contextValue, { charge, failed: { error } });
      return viaApollo();
    }
    if (result.errors?.length) {
      handOver(contextValue, { charge, result });
      return viaApollo();
    }
    // The result as Apollo's pipeline puts it in the response (plugins add their extensions to it).
    const singleResult: { data?: unknown; errors?: unknown; extensions?: Record<string, unknown> } = { data: result.data, ...(result.extensions ? { extensions: result.extensions } : {}) };
    (requestContext.response as { body?: unknown }).body = { kind: 'single', singleResult };
    // Not handed over if one fails: the cost plugin may have settled already (a second settle would refund twice).
    await Promise.all(listeners.map((listener) => listener.willSendResponse?.(requestContext as Parameters<NonNullable<GraphQLRequestListener<Context>['willSendResponse']>>[0])));
    const { headers, status } = requestContext.response.http;
    if (!headers.has('content-type')) headers.set('content-type', plan.mediaType);
    const answered = (requestContext.response as { body?: { singleResult?: typeof singleResult } }).body?.singleResult ?? singleResult;
    this.options.answers.direct.inc();
    // As Apollo writes a single result: its fields in this order, and a newline.
    const body = `${JSON.stringify({ errors: answered.errors, data: answered.data, extensions: answered.extensions })}\n`;
    return { ...(status !== undefined ? { status } : {}), headers, body: { kind: 'complete', string: body } };
  }

  /** Counts an answer of Apollo's (handed over here, or never planned). */
  answeredByApollo(): void {
    this.options.answers.apollo.inc();
  }
}

export interface DirectPlan {
  readonly query: string;
  readonly operationName: string | undefined;
  readonly variables: Record<string, unknown> | undefined;
  readonly known: KnownDocument;
  readonly operation: OperationDefinitionNode;
  readonly mediaType: string;
}
