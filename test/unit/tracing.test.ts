import { describe, expect, it } from '@jest/globals';
import { startTracingIfConfigured } from '../../src/platform/tracing/tracing.js';

describe('startTracingIfConfigured', () => {
  it('starts nothing without an OTLP endpoint', async () => {
    expect(await startTracingIfConfigured(undefined, { serviceName: 'agent-gateway', serviceVersion: '1.0.0' })).toBeUndefined();
  });
});
