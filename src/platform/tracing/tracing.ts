/**
 * OpenTelemetry traces, off unless OTEL_EXPORTER_OTLP_ENDPOINT is set. This module imports nothing from
 * OpenTelemetry: the SDK and its instrumentations are loaded by `startTracingIfConfigured` only when on,
 * so a process without the variable runs exactly the code it ran before tracing existed.
 */

export { REQUEST_ID_ATTRIBUTE } from './attributes.js';

export interface TracingOptions {
  serviceName: string;
  serviceVersion: string;
}

export interface Tracing {
  /** Exports the spans still buffered, giving up after `timeoutMs`. */
  shutdown(timeoutMs: number): Promise<void>;
}

/**
 * Starts tracing when an OTLP endpoint is configured (the SDK itself reads it and the other OTEL_*
 * variables); otherwise loads nothing and returns undefined. Call before importing the app.
 */
export async function startTracingIfConfigured(otlpEndpoint: string | undefined, options: TracingOptions): Promise<Tracing | undefined> {
  if (otlpEndpoint === undefined) return undefined;
  const { startTracing } = await import('./start-tracing.js');
  return startTracing(options);
}
