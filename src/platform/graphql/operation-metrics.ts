import type { ApolloServerPlugin } from '@apollo/server';
import type { HistogramFamily, HistogramSeries } from '../metrics/families.js';
import type { Metrics } from '../metrics/metrics.js';

/** How an operation ended: no errors; errors while executing (data may be partial); refused before execution. */
export type OperationOutcome = 'ok' | 'error' | 'rejected';
const OUTCOMES: readonly OperationOutcome[] = ['ok', 'error', 'rejected'];

/** Distinct operation names that get their own series; later ones share OTHER_OPERATIONS. */
export const MAX_OPERATION_NAMES = 100;
const MAX_OPERATION_NAME_LENGTH = 64;
// Not GraphQL names (those cannot hold parentheses), so no client's operation can take these labels.
export const ANONYMOUS_OPERATION = '(anonymous)';
export const OTHER_OPERATIONS = '(other)';
export const UNRESOLVED_OPERATION = '(unresolved)';

/**
 * `gateway_graphql_operation_duration_seconds` by operation name and outcome, for GraphQL over HTTP.
 * Names come only from documents that validated (anyone can send any name in a document that does
 * not), and only the first MAX_OPERATION_NAMES of them: the rest count as OTHER_OPERATIONS, so a
 * client inventing names cannot grow the series without bound.
 */
export class OperationMetrics {
  private readonly durations: HistogramFamily;
  private readonly seriesByName = new Map<string, readonly HistogramSeries[]>();

  constructor(metrics: Metrics) {
    this.durations = metrics.histogram(
      'gateway_graphql_operation_duration_seconds',
      'GraphQL operations over HTTP by operation name and outcome (ok, error, rejected): latency from the request to the response (the _count is the operation count)',
      ['operation', 'outcome'],
    );
  }

  record(operationName: string, outcome: OperationOutcome, seconds: number): void {
    this.seriesFor(operationName)[OUTCOMES.indexOf(outcome)]!.observe(seconds);
  }

  private seriesFor(operationName: string): readonly HistogramSeries[] {
    const known = this.seriesByName.get(operationName);
    if (known) return known;
    const label =
      this.seriesByName.size >= MAX_OPERATION_NAMES || operationName.length > MAX_OPERATION_NAME_LENGTH ? OTHER_OPERATIONS : operationName;
    const series = this.seriesByName.get(label) ?? OUTCOMES.map((outcome) => this.durations.series({ operation: label, outcome }));
    this.seriesByName.set(label, series);
    return series;
  }

  /** The Apollo plugin that times each operation and records it when its response leaves. */
  plugin<Context extends object>(): ApolloServerPlugin<Context> {
    return {
      requestDidStart: async () => {
        const started = performance.now();
        let resolvedName: string | undefined;
        return {
          // Reached only by a document that parsed and validated, so its names are the server's own.
          didResolveOperation: async ({ operation, operationName }) => {
            if (operation) resolvedName = operationName ?? ANONYMOUS_OPERATION;
          },
          willSendResponse: async ({ response }) => {
            const body = response.body.kind === 'single' ? response.body.singleResult : response.body.initialResult;
            const outcome: OperationOutcome = !body.errors?.length ? 'ok' : resolvedName !== undefined && body.data !== undefined ? 'error' : 'rejected';
            this.record(resolvedName ?? UNRESOLVED_OPERATION, outcome, (performance.now() - started) / 1000);
          },
        };
      },
    };
  }
}
