import { HeaderMap, type ApolloServerPlugin, type GraphQLRequestListener } from '@apollo/server';
import {
  BREAK,
  getVariableValues,
  GraphQLError,
  isNonNullType,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import type { Actor } from '../auth/actor.js';
import type { PresentedCredential } from '../auth/credentials.js';
import { addressKey } from '../http/client-address.js';
import { AdmissionRefusal, CostRefusal, type Admission, type CostBudget, type CostReport } from './cost-budget.js';
import { actualCost, estimateCost } from './operation-cost.js';
import { handedOverWith } from './handed-over.js';
import { fragmentsOf } from './document-fragments.js';

/** Who pays for an operation: what the platform context knows of its caller. */
export interface CostPayer {
  readonly actor: () => Promise<Actor>;
  readonly credential: PresentedCredential;
  readonly ip: string;
}

/** One operation's cost so far: estimated and charged, waiting for its answer. */
export interface Charge {
  readonly estimated: number;
  readonly admission: Admission | undefined;
  readonly document: DocumentNode;
  readonly operation: OperationDefinitionNode;
  readonly variables: Record<string, unknown> | undefined;
}

/**
 * Every GraphQL operation's cost, over every transport: estimated and charged to its caller before it
 * runs (refused with `rate_limited` when over budget, before any resolver and so any SQL), counted from
 * its answer after, and reported in `extensions.cost`. The caller is its credential once that
 * resolved to someone, else its address (an IPv6 client by its /64): an unknown token buys no budget
 * of its own.
 */
export class OperationCosts {
  /** Estimates of operations that take no variables, by document (Apollo keeps one object per cached document). */
  private readonly fixedEstimates = new WeakMap<DocumentNode, Map<string, number>>();

  constructor(
    private readonly schema: GraphQLSchema,
    readonly budget: CostBudget,
  ) {}

  /**
   * Estimates and charges; throws a CostRefusal when the caller's budget does not hold the estimate, and an
   * AdmissionRefusal for an operation that cannot be costed (a null `if` of `@skip`/`@include`).
   */
  async admit(payer: CostPayer, document: DocumentNode, operation: OperationDefinitionNode, variables: Record<string, unknown> | undefined): Promise<Charge> {
    const estimated = this.estimate(document, operation, variables);
    const admission = this.budget.enforced ? await this.budget.admit(await payerKey(payer), estimated) : undefined;
    return { estimated, admission, document, operation, variables };
  }

  private estimate(document: DocumentNode, operation: OperationDefinitionNode, variables: Record<string, unknown> | undefined): number {
    const fixed = !operation.variableDefinitions?.length;
    const name = operation.name?.value ?? '';
    const known = fixed ? this.fixedEstimates.get(document)?.get(name) : undefined;
    if (known !== undefined) return known;
    let estimated: number;
    try {
      estimated = estimateCost(this.schema, document, operation.name?.value, variables);
    } catch (error) {
      if (!operation.variableDefinitions?.length) throw error;
      const coerced = getVariableValues(this.schema, operation.variableDefinitions, variables ?? {});
      // Variables that do not coerce: execution answers that, having run nothing.
      if (coerced.errors) return 0;
      // A null where a value is required (a nullable variable with a default, sent as null, as an argument of a
      // non-null type or the `if` of @skip/@include): graphql-js would run what lies above it and answer a field
      // error there; it cannot be costed, so it does not run.
      const nulled = nullWhereRequired(this.schema, document, operation, coerced.coerced);
      if (nulled) {
        const reason = `must not be null: it is given where ${nulled.type} is required`;
        throw new AdmissionRefusal('validation', `$${nulled.name} ${reason}`, { [`$${nulled.name}`]: reason });
      }
      throw error;
    }
    if (fixed) {
      let byName = this.fixedEstimates.get(document);
      if (!byName) this.fixedEstimates.set(document, (byName = new Map()));
      byName.set(name, estimated);
    }
    return estimated;
  }

  /** Counts what the answer holds, gives back the unused part, and reports the cost. */
  settle(charge: Charge, data: unknown): CostReport {
    // No data: nothing ran. Null data: something ran (a null from a non-null root field ends the answer while
    // the other root fields go on), and what it cost is not in the answer: the estimate stands.
    const actual = data === undefined ? 0 : data === null ? charge.estimated : actualCost(this.schema, charge.document, charge.operation, charge.variables, data);
    // A subscription keeps its estimate: its events are not charged one by one.
    return this.budget.settle(charge.admission, charge.estimated, charge.operation.operation === 'subscription' ? charge.estimated : actual);
  }

  /**
   * The Apollo plugin for GraphQL over HTTP: charges once the operation is known (after validation),
   * answers a refusal 429 with Retry-After, and puts `extensions.cost` on every answer (0 and 0 with no
   * budget for a request that never reached an operation: it was not charged).
   */
  plugin<Context extends CostPayer>(): ApolloServerPlugin<Context> {
    const charges = new WeakMap<object, Charge>();
    const refusals = new WeakMap<object, CostRefusal>();
    // One listener for every request (the hot path): state travels in WeakMaps keyed by the request.
    const listener: GraphQLRequestListener<Context> = {
      didResolveOperation: async ({ request, contextValue, document, operation }) => {
        if (!operation) return;
        // Charged (or refused) already by GraphQL over HTTP's direct path, which handed the request over.
        const prior = handedOverWith(contextValue);
        try {
          if (prior?.notAdmitted) throw prior.notAdmitted.error;
          charges.set(request, prior?.charge ?? (await this.admit(contextValue, document, operation, request.variables)));
        } catch (error) {
          if (!(error instanceof AdmissionRefusal)) throw error;
          if (!(error instanceof CostRefusal)) throw new GraphQLError(error.message, { originalError: error, extensions: { http: { status: error.status } } });
          refusals.set(request, error);
          const retryAfter = String(error.extensions.retryAfterSeconds);
          throw new GraphQLError(error.message, { originalError: error, extensions: { http: { status: error.status, headers: new HeaderMap([['retry-after', retryAfter]]) } } });
        }
      },
      willSendResponse: async ({ request, response }) => {
        if (response.body.kind !== 'single') return;
        const result = response.body.singleResult;
        const charge = charges.get(request);
        const cost = charge ? this.settle(charge, result.data) : (refusals.get(request)?.extensions.cost ?? { estimated: 0, actual: 0 });
        result.extensions = { ...result.extensions, cost };
      },
    };
    return { requestDidStart: async () => listener };
  }
}

async function payerKey(payer: CostPayer): Promise<string> {
  // The address is parsed only for a caller charged by it: a token's holder is charged by its credential.
  const byAddress = () => `address:${addressKey(payer.ip)}`;
  let actor: Actor;
  try {
    actor = await payer.actor();
  } catch {
    // The caller could not be looked up (the database failing): charged to its address, and the
    // failure is reported where the operation needs the caller, as before costs were counted.
    return byAddress();
  }
  return actor.kind !== 'anonymous' && payer.credential.kind === 'token' ? `credential:${payer.credential.token}` : byAddress();
}

/**
 * The first variable of `operation` coerced to null where its position requires a value (an argument, an input
 * field or a list item of a non-null type, the `if` of @skip/@include), in the operation and the fragments it
 * spreads (another operation of the document may use the same name otherwise).
 */
function nullWhereRequired(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  coerced: Record<string, unknown> | undefined,
): { name: string; type: string } | undefined {
  const fragments = fragmentsOf(document);
  const typeInfo = new TypeInfo(schema);
  const seen = new Set<string>();
  const pending: (OperationDefinitionNode | FragmentDefinitionNode)[] = [operation];
  let found: { name: string; type: string } | undefined;
  const visitor = visitWithTypeInfo(typeInfo, {
    FragmentSpread(node) {
      const fragment = fragments.get(node.name.value);
      if (fragment && !seen.has(node.name.value)) {
        seen.add(node.name.value);
        pending.push(fragment);
      }
    },
    Variable(node) {
      const expected = typeInfo.getInputType();
      if (!expected || !isNonNullType(expected) || coerced?.[node.name.value] !== null) return undefined;
      found = { name: node.name.value, type: String(expected) };
      return BREAK;
    },
  });
  for (let next = pending.shift(); next && !found; next = pending.shift()) visit(next, visitor);
  return found;
}
