import { describe, expect, it } from '@jest/globals';
import { MAX_OPERATION_NAMES, OperationMetrics, OTHER_OPERATIONS } from '../../src/platform/graphql/operation-metrics.js';
import { Metrics } from '../../src/platform/metrics/metrics.js';

const operationLabels = (text: string) =>
  new Set([...text.matchAll(/^gateway_graphql_operation_duration_seconds_count\{operation="([^"]*)"/gm)].map((match) => match[1]));

describe('GraphQL operation metrics', () => {
  it('gives the first operation names their own series and counts the rest under (other)', async () => {
    const metrics = new Metrics();
    const operations = new OperationMetrics(metrics);
    for (let i = 0; i < MAX_OPERATION_NAMES + 50; i++) operations.record(`Operation${i}`, 'ok', 0.001);
    operations.record('Operation0', 'ok', 0.001);
    const text = await metrics.render();
    const labels = operationLabels(text);
    expect(labels.size).toBe(MAX_OPERATION_NAMES + 1);
    expect(labels.has('Operation0')).toBe(true);
    expect(labels.has(`Operation${MAX_OPERATION_NAMES + 49}`)).toBe(false);
    expect(text).toContain(`gateway_graphql_operation_duration_seconds_count{operation="Operation0",outcome="ok"} 2`);
    expect(text).toContain(`gateway_graphql_operation_duration_seconds_count{operation="${OTHER_OPERATIONS}",outcome="ok"} 50`);
  });

  it('puts a long name under (other)', async () => {
    const metrics = new Metrics();
    new OperationMetrics(metrics).record('x'.repeat(65), 'error', 0.2);
    const text = await metrics.render();
    expect([...operationLabels(text)]).toEqual([OTHER_OPERATIONS]);
    expect(text).toContain(`gateway_graphql_operation_duration_seconds_bucket{le="0.25",operation="${OTHER_OPERATIONS}",outcome="error"} 1`);
    expect(text).toContain(`gateway_graphql_operation_duration_seconds_bucket{le="0.1",operation="${OTHER_OPERATIONS}",outcome="error"} 0`);
  });
});
