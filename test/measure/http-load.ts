/**
 * The load generator of `graphql-request.ts` with MEASURE_TRANSPORT=socket: autocannon in a process of
 * its own (so that the measured process's CPU is the server's alone), 16 connections, one request shape,
 * the callers' tokens round-robin. Prints one JSON line: { requests, non2xx, errors } (errors: failed and timed-out requests).
 *
 *   node --import @swc-node/register/esm-register test/measure/http-load.ts <base> <seconds> <load.json>
 *
 * load.json: { request: { method, path, headers, body? }, tokens: string[] }.
 */
import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';

interface LoadFile {
  request: { method: 'GET' | 'POST'; path: string; headers: Record<string, string>; body?: string };
  tokens: string[];
}

const [base, seconds, loadFile] = process.argv.slice(2) as [string, string, string];
const { request, tokens } = JSON.parse(readFileSync(loadFile, 'utf8')) as LoadFile;
let next = 0;
const result = await autocannon({
  url: base,
  connections: 16,
  duration: Number(seconds),
  requests: [{ setupRequest: (defaults) => ({ ...defaults, ...request, headers: { ...request.headers, authorization: `Bearer ${tokens[next++ % tokens.length]}` } }) }],
});
console.log(JSON.stringify({ requests: result.requests.total, non2xx: result.non2xx, errors: result.errors + result.timeouts }));
