import { register } from 'node:module';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import { trace } from '@opentelemetry/api';
import { GraphQLInstrumentation } from '@opentelemetry/instrumentation-graphql';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { NodeSDK, resources } from '@opentelemetry/sdk-node';
import { createAddHookMessageChannel } from 'import-in-the-middle';
import { redactUrl } from '../logger.js';
import { REQUEST_ID_ATTRIBUTE } from './attributes.js';
import type { Tracing, TracingOptions } from './tracing.js';

/**
 * Starts the OpenTelemetry SDK with the HTTP, undici, Fastify, pg and GraphQL instrumentations.
 * Must run before any instrumented module is imported: ESM imports are patched by the
 * import-in-the-middle loader hook, which only sees modules loaded after it is registered.
 */
export async function startTracing(options: TracingOptions): Promise<Tracing> {
  // Only the modules an instrumentation asked for go through the hook; the rest load untouched.
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);

  const sdk = new NodeSDK({
    // Detected resources (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, host, process) override these.
    resource: resources.defaultResource().merge(
      resources.resourceFromAttributes({ 'service.name': options.serviceName, 'service.version': options.serviceVersion }),
    ),
    // Traces only: metrics stay Prometheus (/metrics) and logs stay pino, so the SDK's OTLP defaults for those are off.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      // A calendar feed's token travels in its URL (apps send no headers); spans keep the URL without it.
      new HttpInstrumentation({ redactedQueryParamsServer: ['token'] }),
      new UndiciInstrumentation(),
      // Queries outside a request (migrations, LISTEN heartbeats, job and webhook polling) would each be a
      // trace of their own every few seconds: only statements under a span are recorded.
      new PgInstrumentation({ requireParentSpan: true }),
      new GraphQLInstrumentation({ mergeItems: true }),
      new FastifyOtelInstrumentation({
        // Fastify announces every new instance on a diagnostics channel: app.ts stays free of tracing code.
        registerOnInitialization: true,
        requestHook: (requestSpan, request) => {
          requestSpan.setAttribute(REQUEST_ID_ATTRIBUTE, request.id);
          // @fastify/otel records `url.path` as the whole request URL, query string included.
          requestSpan.setAttribute('url.path', redactUrl(request.url));
          // Still the HTTP server span here (the Fastify span is not active yet): backends list requests by it.
          trace.getActiveSpan()?.setAttribute(REQUEST_ID_ATTRIBUTE, request.id);
        },
      }),
    ],
  });
  sdk.start();
  await waitForAllMessagesAcknowledged();

  return {
    shutdown: async (timeoutMs) => {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
      await Promise.race([sdk.shutdown(), deadline]).finally(() => clearTimeout(timer));
    },
  };
}
