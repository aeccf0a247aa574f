import { SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import { BREAK, execute, getOperationAST, GraphQLError, visit, type DocumentNode, type ExecutionResult, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { LRUCache } from 'lru-cache';
import type { CounterSeries } from '../metrics/families.js';
import { GRAPHQL_LIMITS } from './limits.js';
import { leafShapeOf, leavesAreSerialized, serializeLeaves, type LeafShape } from './serialized-leaves.js';

/** One operation to run: a document that parsed and validated, and what the client sent with it. */
export interface OperationRequest {
  /** Identifies the document's text (Apollo's `queryHash`: SHA-256 of the text). */
  readonly documentKey: string;
  readonly document: DocumentNode;
  /** The operation name the client sent (none: the document's only operation). */
  readonly operationName: string | null | undefined;
  /**
   * The operation that runs; none when the document holds no operation of the name sent (Apollo calls
   * its gateway executor all the same, with `operation` undefined though its type says otherwise).
   */
  readonly operation: OperationDefinitionNode | undefined;
  readonly contextValue: unknown;
  readonly variableValues: Readonly<Record<string, unknown>> | undefined;
}

interface Plan {
  /** How often the operation was asked for while not compiled. */
  seen: number;
  /** Its compiled form; null when graphql-jit cannot compile it (graphql-js runs it). */
  compiled?: CompiledQuery | null;
  /** Set when `compiled` leaves built-in scalars and enums unserialised: the leaves its answers are checked on. */
  leaves?: LeafShape;
}

const tracer = trace.getTracer('agent-gateway/graphql');

export interface CompiledOperationsOptions {
  /** The request of an operation on which it is compiled (1: at once; Infinity: never). */
  compileAfterSeen: number;
  /** Most operations kept compiled. */
  maxCompiled?: number;
  /** Counts operations by how they ran. */
  executions?: { compiled: CounterSeries; interpreted: CounterSeries };
  /** Counts answers whose built-in leaves were serialised after the check: one was not in its serialised form (serialized-leaves.ts). */
  leafRepairs?: CounterSeries;
}

/**
 * Runs operations compiled by graphql-jit: a document the server sees again is turned into one
 * JavaScript function for its selection (resolvers called directly, leaves serialised inline), instead
 * of graphql-js walking the document and the schema for every field of every row. An operation is
 * compiled the second time it is asked for, or at start for a trusted document (`prepare`), so a client
 * inventing documents costs graphql-js's execution, not a compilation each; at most
 * `GRAPHQL_LIMITS.maxCompiledOperations` are kept (least recently used go first).
 *
 * graphql-js still runs what graphql-jit cannot compile, and a request whose variables do not coerce:
 * graphql-jit words those errors its own way, and clients (and Apollo's BAD_USER_INPUT) know graphql-js's.
 * Subscriptions are not run here.
 *
 * A query whose answer can be checked (serialized-leaves.ts) is compiled without graphql-jit's serialisers
 * for built-in scalars and enums, and its answer checked instead; an answer that fails the check (a
 * resolver gave a number for an `ID`, say) has those leaves serialised afterwards, as execution would.
 *
 * OpenTelemetry's GraphQL instrumentation opens its operation span inside graphql-js's `execute`, which
 * a compiled operation never calls: here the compiled run gets a span of the same name and attributes.
 *
 * graphql-jit's own JSON serialiser (`customJSONSerializer`, fast-json-stringify) is not used: it refuses
 * custom scalars (`DateTimeISO`, so no calendar query would compile), and for a page of 50 bookings it was
 * no faster than V8's JSON.stringify on Node 24 (62 µs each, 11 KB).
 */
export class CompiledOperations {
  private readonly plans: LRUCache<string, Plan>;
  /** Operations compiled at start (trusted documents): never evicted by whatever else comes. */
  private readonly pinned = new Map<string, Plan>();
  private readonly compileAfterSeen: number;

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly options: CompiledOperationsOptions,
  ) {
    this.compileAfterSeen = options.compileAfterSeen;
    this.plans = new LRUCache({ max: options.maxCompiled ?? GRAPHQL_LIMITS.maxCompiledOperations });
  }

  /** Compiles an operation now (a trusted document at start); false when graphql-jit cannot compile it. */
  prepare(documentKey: string, document: DocumentNode, operationName: string | null | undefined): boolean {
    const plan: Plan = { seen: 0 };
    this.pinned.set(planKey(documentKey, operationName), plan);
    return this.compile(plan, document, operationName) !== null;
  }

  /** Whether the operation runs compiled now (tests and metrics). */
  isCompiled(documentKey: string, operationName: string | null | undefined): boolean {
    const key = planKey(documentKey, operationName);
    return Boolean((this.pinned.get(key) ?? this.plans.peek(key))?.compiled);
  }

  /** Runs a query or mutation: compiled when it has been (or can now be) compiled, else by graphql-js. */
  execute(request: OperationRequest): ExecutionResult | Promise<ExecutionResult> {
    const { operation } = request;
    // No operation of that name: graphql-js answers `Unknown operation named "…".`, having run nothing.
    const plan = operation === undefined || operation.operation === 'subscription' ? undefined : this.compiledPlanFor(request);
    if (!plan?.compiled || !operation) return this.interpret(request);
    const { compiled } = plan;
    return tracer.startActiveSpan(spanName(operation), { attributes: spanAttributes(operation) }, (span) => {
      let ended = false;
      const finish = (result: ExecutionResult): ExecutionResult | Promise<ExecutionResult> => {
        ended = true;
        span.end();
        // Variables that do not coerce: nothing ran (graphql-jit checks them first); graphql-js answers.
        if (result.errors && result.data === undefined) return this.interpret(request);
        let answer = result;
        if (plan.leaves && !leavesAreSerialized(plan.leaves, result.data)) {
          this.options.leafRepairs?.inc();
          answer = serializeLeaves(plan.leaves, result);
        }
        this.options.executions?.compiled.inc();
        return answer.errors ? { ...answer, errors: answer.errors.map(asGraphQLError) } : answer;
      };
      const fail = (error: unknown): never => {
        // Thrown after the compiled run ended (by graphql-js answering it): the span is closed already.
        if (ended) throw error;
        ended = true;
        span.recordException(error as Error);
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
        throw error;
      };
      try {
        const result = compiled.query(undefined, request.contextValue, request.variableValues as Record<string, unknown> | undefined);
        return isPromise(result) ? result.then(finish, fail) : finish(result);
      } catch (error) {
        return fail(error);
      }
    });
  }

  private interpret(request: OperationRequest): ExecutionResult | Promise<ExecutionResult> {
    this.options.executions?.interpreted.inc();
    return execute({
      schema: this.schema,
      document: request.document,
      contextValue: request.contextValue,
      variableValues: request.variableValues,
      operationName: request.operationName,
    });
  }

  private compiledPlanFor(request: OperationRequest): Plan | undefined {
    const key = planKey(request.documentKey, request.operationName);
    const pinned = this.pinned.get(key);
    if (pinned) return pinned;
    let plan = this.plans.get(key);
    if (!plan) this.plans.set(key, (plan = { seen: 0 }));
    if (plan.compiled !== undefined) return plan;
    if (++plan.seen < this.compileAfterSeen) return undefined;
    this.compile(plan, request.document, request.operationName);
    return plan;
  }

  private compile(plan: Plan, document: DocumentNode, operationName: string | null | undefined): CompiledQuery | null {
    if (usesSkipOrInclude(document)) {
      plan.compiled = null;
      return null;
    }
    const operation = getOperationAST(document, operationName ?? undefined);
    const leaves = operation ? leafShapeOf(this.schema, document, operation) : undefined;
    const compiled = compileQuery(this.schema, document, operationName ?? undefined, { disableLeafSerialization: leaves !== undefined });
    plan.compiled = isCompiledQuery(compiled) ? compiled : null;
    if (plan.compiled && leaves) plan.leaves = leaves;
    return plan.compiled;
  }
}

/**
 * graphql-jit's errors are GraphQLErrors by prototype only: without `extensions` when their cause has
 * none, which Apollo's error formatting reads. The same error as graphql-js makes it.
 */
function asGraphQLError(error: GraphQLError): GraphQLError {
  const made = new GraphQLError(error.message, {
    ...(error.path ? { path: error.path } : {}),
    ...(error.originalError ? { originalError: error.originalError } : {}),
    ...(error.extensions ? { extensions: error.extensions } : {}),
  });
  if (error.locations) (made as { locations: GraphQLError['locations'] }).locations = error.locations;
  return made;
}

/**
 * Whether any selection of the document carries `@skip` or `@include`: graphql-js runs such documents.
 * graphql-jit (0.8.9) compiles those conditions into properties it writes onto the document's own field
 * nodes, adding to what an earlier compilation wrote (Apollo caches the document: a second operation
 * sharing a fragment with a first inherited its condition, and answered `{}` where graphql-js answered
 * the fields), and marks a fragment spread visited before reading its directive (`...F @skip(if: true)
 * ...F` answered without F's fields).
 */
function usesSkipOrInclude(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Directive(node) {
      if (node.name.value !== 'skip' && node.name.value !== 'include') return undefined;
      found = true;
      return BREAK;
    },
  });
  return found;
}

function planKey(documentKey: string, operationName: string | null | undefined): string {
  return operationName ? `${documentKey}:${operationName}` : documentKey;
}

// As @opentelemetry/instrumentation-graphql names the operation span and its attributes.
function spanName(operation: OperationDefinitionNode): string {
  return operation.name ? `${operation.operation} ${operation.name.value}` : operation.operation;
}

function spanAttributes(operation: OperationDefinitionNode): Attributes {
  return { 'graphql.operation.type': operation.operation, ...(operation.name ? { 'graphql.operation.name': operation.name.value } : {}) };
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as Promise<T> | null)?.then === 'function';
}
