import type { ExecutionResult } from 'graphql';
import type { Charge } from './operation-costs.js';

/**
 * What the direct path did for a request before handing it to Apollo: the cost admitted (or why it was
 * not: a CostRefusal, or the budget failing) and, when the operation ran, its result (or what it threw).
 * Apollo's pipeline then answers with these instead of charging and executing again (the cost plugin and
 * the executor read them), so an answer with errors, or a refusal, is formatted by Apollo exactly as if
 * Apollo had run it all.
 */
export interface HandedOver {
  readonly charge?: Charge;
  readonly notAdmitted?: { readonly error: unknown };
  readonly result?: ExecutionResult;
  readonly failed?: { readonly error: unknown };
}

/** The executor's part: the result the direct path got, or its failure thrown again; undefined when it did not run. */
export function executedAlready(context: object): ExecutionResult | undefined {
  const prior = handedOverWith(context);
  if (prior?.failed) throw prior.failed.error;
  return prior?.result;
}

// On the context object, which Apollo copies (own enumerable properties, symbols included) for its plugins and executor.
const HANDED_OVER = Symbol('graphql.handedOver');

export function handedOverWith(context: object): HandedOver | undefined {
  return (context as { [HANDED_OVER]?: HandedOver })[HANDED_OVER];
}

export function handOver(context: object, what: HandedOver): void {
  (context as { [HANDED_OVER]?: HandedOver })[HANDED_OVER] = what;
}
