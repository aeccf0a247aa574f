import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/HTTP JSON export carries it (ids are hex strings). */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  scope: string;
  attributes: Record<string, string | number | boolean>;
  resource: Record<string, string | number | boolean>;
}

export interface OtlpReceiver {
  /** What to give OTEL_EXPORTER_OTLP_ENDPOINT: the SDK appends `/v1/traces`. */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Every request that reached the receiver, whatever its path. */
  requests: number;
  close(): Promise<void>;
}

interface OtlpAnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpAttribute {
  key: string;
  value: OtlpAnyValue;
}
interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: { scope?: { name?: string }; spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: OtlpAttribute[] }[] }[];
  }[];
}

function readAttributes(attributes: OtlpAttribute[] = []): Record<string, string | number | boolean> {
  return Object.fromEntries(
    attributes.map(({ key, value }) => [key, value.stringValue ?? value.boolValue ?? value.doubleValue ?? Number(value.intValue)]),
  );
}

/** A local OTLP/HTTP collector for `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`: keeps every span it is sent. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const receiver: Omit<OtlpReceiver, 'endpoint' | 'close'> = { spans: [], requests: 0 };
  const server: Server = createServer((request, response) => {
    receiver.requests += 1;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/traces' || !request.headers['content-type']?.startsWith('application/json')) {
        response.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport;
      for (const resourceSpans of body.resourceSpans ?? []) {
        const resource = readAttributes(resourceSpans.resource?.attributes);
        for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
          for (const span of scopeSpans.spans ?? []) {
            receiver.spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId || undefined,
              name: span.name,
              kind: span.kind,
              scope: scopeSpans.scope?.name ?? '',
              attributes: readAttributes(span.attributes),
              resource,
            });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    endpoint: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
