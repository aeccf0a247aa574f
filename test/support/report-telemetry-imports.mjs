// Preloaded into a server process (`--import`): prints one line per OpenTelemetry SDK, instrumentation
// or loader-hook package it resolves, from import or require. The API alone does not count: prom-client
// loads it in every process, and without an SDK it is a no-op.
import { registerHooks } from 'node:module';

const TELEMETRY_IMPORT_MARK = 'telemetry package loaded:';
const TELEMETRY_PACKAGE = /^(@opentelemetry\/(?!api$)|@fastify\/otel$|import-in-the-middle|require-in-the-middle)/;
const reported = new Set();

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (TELEMETRY_PACKAGE.test(specifier) && !reported.has(specifier)) {
      reported.add(specifier);
      process.stderr.write(`${TELEMETRY_IMPORT_MARK} ${specifier}\n`);
    }
    return nextResolve(specifier, context);
  },
});
