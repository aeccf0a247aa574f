import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort } from '../../../src/platform/db/embedded-postgres.js';
import { APP_MANIFEST } from '../../../src/platform/manifest.js';
import { REQUEST_ID_ATTRIBUTE } from '../../../src/platform/tracing/tracing.js';
import { createTestDatabase, withoutCost } from '../../harness.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../../factories/otlp-receiver.js';
import { errorLines, startServer, waitFor, type RunningServer } from '../../factories/server-process.js';
import { eventually } from '../../factories/webhook-receiver.js';

const IMPORT_REPORTER = new URL('../../support/report-telemetry-imports.mjs', import.meta.url).href;
// Printed by test/support/report-telemetry-imports.mjs.
const TELEMETRY_IMPORT_MARK = 'telemetry package loaded:';
const SPAN_KIND_SERVER = 2;

/** The server process as `npm start` runs it, on a database of its own, with and without an OTLP endpoint. */
describe('traces', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let receiver: OtlpReceiver;
  const running = new Set<RunningServer>();

  beforeAll(async () => {
    database = await createTestDatabase();
    receiver = await startOtlpReceiver();
  });
  afterAll(async () => {
    for (const server of running) if (server.child.exitCode === null) server.child.kill('SIGKILL');
    await receiver.close();
    await database.drop();
  });

  const start = async (env: Record<string, string>) => {
    const port = await freePort();
    const server = startServer(
      { PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: database.url, PRICE_PROVIDERS: '', ...env },
      { imports: [IMPORT_REPORTER] },
    );
    running.add(server);
    await waitFor(server, 'gateway ready');
    return { server, base: `http://127.0.0.1:${port}` };
  };
  const post = async (base: string, path: string, body: unknown, token?: string) => {
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    return { status: response.status, requestId: response.headers.get('x-request-id'), body: (await response.json()) as Record<string, string> };
  };
  const stop = async (server: RunningServer) => {
    server.child.kill('SIGTERM');
    expect({ code: await server.exited, errors: errorLines(server.output()).filter((line) => !line.startsWith(TELEMETRY_IMPORT_MARK)) }).toEqual({ code: 0, errors: [] });
  };
  const telemetryImports = (server: RunningServer) => server.output().split('\n').filter((line) => line.startsWith(TELEMETRY_IMPORT_MARK));

  let token: string;
  let agentId: string;
  let nextSlotHours = 24;
  const createBooking = async (base: string) => {
    const startsAt = new Date(Date.now() + nextSlotHours++ * 3_600_000);
    return post(base, '/api/bookings', { agentId, startsAt: startsAt.toISOString(), endsAt: new Date(startsAt.getTime() + 3_600_000).toISOString() }, token);
  };

  it('exports one trace per REST create: the HTTP server span with the request id, the SQL spans under it', async () => {
    const { server, base } = await start({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    const root = await post(base, '/api/agents', { name: 'root', bootstrap: true });
    expect(root.status).toBe(201);
    token = root.body.public_token!;
    agentId = root.body.id!;

    const created = await createBooking(base);
    expect(created.status).toBe(201);
    const requestId = created.requestId!;
    expect(requestId).toBeTruthy();

    const serverSpan = await eventually(async () =>
      receiver.spans.find((span) => span.kind === SPAN_KIND_SERVER && span.attributes[REQUEST_ID_ATTRIBUTE] === requestId),
    );
    const trace = await eventually(async () => {
      const spans = receiver.spans.filter((span) => span.traceId === serverSpan.traceId);
      return spans.some((span) => span.scope === '@opentelemetry/instrumentation-pg') ? spans : undefined;
    });
    const me = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: 'query Me { me { id } }' }),
    });
    expect(withoutCost(await me.json() as object)).toEqual({ data: { me: { id: agentId } } });
    const graphqlRequestId = me.headers.get('x-request-id');
    const graphqlServerSpan = await eventually(async () =>
      receiver.spans.find((span) => span.kind === SPAN_KIND_SERVER && span.attributes[REQUEST_ID_ATTRIBUTE] === graphqlRequestId),
    );
    const graphqlSpans = await eventually(async () => {
      const spans = receiver.spans.filter((span) => span.traceId === graphqlServerSpan.traceId && span.scope === '@opentelemetry/instrumentation-graphql');
      return spans.some((span) => span.name.startsWith('query')) ? spans : undefined;
    });
    // The second time, graphql-jit runs the operation (GRAPHQL_JIT: compiled on its second request)
    // past graphql-js's execute, where the instrumentation makes its span: the gateway makes it then.
    const compiledMe = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: 'query Me { me { id } }' }),
    });
    expect(withoutCost(await compiledMe.json() as object)).toEqual({ data: { me: { id: agentId } } });
    const compiledRequestId = compiledMe.headers.get('x-request-id');
    const compiledServerSpan = await eventually(async () =>
      receiver.spans.find((span) => span.kind === SPAN_KIND_SERVER && span.attributes[REQUEST_ID_ATTRIBUTE] === compiledRequestId),
    );
    const compiledOperationSpan = await eventually(async () => receiver.spans.find((span) => span.traceId === compiledServerSpan.traceId && span.name === 'query Me'));
    // A calendar feed's token is in its URL: no span keeps it.
    const feed = await post(base, '/api/calendar-feeds', {}, token);
    expect(feed.status).toBe(201);
    const feedResponse = await fetch(`${base}${feed.body.path}`);
    expect(feedResponse.status).toBe(200);
    const feedRequestId = feedResponse.headers.get('x-request-id');
    const feedServerSpan = await eventually(async () =>
      receiver.spans.find((span) => span.kind === SPAN_KIND_SERVER && span.attributes[REQUEST_ID_ATTRIBUTE] === feedRequestId),
    );
    const feedTrace = await eventually(async () => {
      const spans = receiver.spans.filter((span) => span.traceId === feedServerSpan.traceId);
      return spans.some((span) => span.scope === '@fastify/otel') ? spans : undefined;
    });
    await stop(server);
    expect(JSON.stringify(feedTrace)).toContain('calendar.ics');
    expect(JSON.stringify(feedTrace)).not.toContain(feed.body.token!.slice(4));
    expect(graphqlServerSpan.name).toBe('POST /graphql');
    expect(graphqlSpans.map((span) => span.name)).toEqual(expect.arrayContaining(['graphql.parse', 'graphql.validate', 'query Me']));
    expect(compiledOperationSpan).toMatchObject({ scope: 'agent-gateway/graphql', attributes: { 'graphql.operation.type': 'query', 'graphql.operation.name': 'Me' } });

    const byId = new Map(trace.map((span) => [span.spanId, span]));
    const ancestors = (span: ReceivedSpan): ReceivedSpan[] => {
      const parent = span.parentSpanId === undefined ? undefined : byId.get(span.parentSpanId);
      return parent ? [parent, ...ancestors(parent)] : [];
    };
    expect(serverSpan).toMatchObject({
      name: 'POST /api/bookings',
      parentSpanId: undefined,
      scope: '@opentelemetry/instrumentation-http',
      attributes: { 'http.route': '/api/bookings', [REQUEST_ID_ATTRIBUTE]: requestId },
      resource: { 'service.name': APP_MANIFEST.name, 'service.version': APP_MANIFEST.version },
    });
    // Fastify's own request span sits under the server span and carries the id too.
    expect(trace.find((span) => span.scope === '@fastify/otel' && span.name === 'request')).toMatchObject({
      parentSpanId: serverSpan.spanId,
      attributes: { [REQUEST_ID_ATTRIBUTE]: requestId },
    });
    const queries = trace.filter((span) => span.scope === '@opentelemetry/instrumentation-pg' && span.attributes['db.query.text'] !== undefined);
    expect(queries.length).toBeGreaterThan(0);
    expect(queries.filter((query) => !ancestors(query).includes(serverSpan))).toEqual([]);
    expect(queries.filter((query) => query.attributes['db.namespace'] !== database.name)).toEqual([]);
    // The create itself is one statement calling the create_booking function (the hot path).
    expect(queries.map((query) => String(query.attributes['db.query.text']))).toContainEqual(expect.stringContaining('create_booking('));
    // The whole request is one trace: no other trace holds a span naming this request.
    expect(receiver.spans.filter((span) => span.attributes[REQUEST_ID_ATTRIBUTE] === requestId && span.traceId !== serverSpan.traceId)).toEqual([]);
    expect(telemetryImports(server).length).toBeGreaterThan(0);
  }, 120_000);

  it('loads no OpenTelemetry SDK, instrumentation or loader hook and exports nothing without OTEL_EXPORTER_OTLP_ENDPOINT', async () => {
    const exportsBefore = receiver.requests;
    const { server, base } = await start({});
    expect((await createBooking(base)).status).toBe(201);
    await stop(server);
    expect(telemetryImports(server)).toEqual([]);
    expect(receiver.requests).toBe(exportsBefore);
  }, 120_000);
});
