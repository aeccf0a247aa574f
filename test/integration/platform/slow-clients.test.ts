import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect, type AddressInfo } from 'node:net';
import { SLOW_CLIENT_CHECK_INTERVAL_MS } from '../../../src/platform/http/slow-clients.js';
import { startTestApp, type TestApp } from '../../harness.js';

/**
 * Clients that send their request slowly, over real sockets: the request timeout is the real
 * mechanism (Node's HTTP server, as the app configures it), shortened from 30 s so that the test is quick.
 */
const REQUEST_TIMEOUT_MS = 2_000;
/** Timers on two shared cores fire late; the bound itself is the timeout plus the check interval. */
const SCHEDULING_SLACK_MS = 1_500;
const TRICKLE_EVERY_MS = 200;

type Trickle = 'headers' | 'body' | 'nothing';

interface Outcome {
  kind: Trickle;
  /** From the connection's opening to its closing by the server; undefined if still open when the test gave up. */
  closedAfterMs: number | undefined;
  statusLine: string;
}

describe('clients that send their request slowly', () => {
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    t = await startTestApp({ jobs: false, env: { REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(() => t.close());

  /** Opens a socket and sends one byte (or header line) at a time; the server is expected to close it. */
  function trickle(kind: Trickle, giveUpAfterMs: number): Promise<Outcome> {
    return new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      let openedAt = 0;
      let received = '';
      let sent = 0;
      let timer: NodeJS.Timeout | undefined;
      const giveUp = setTimeout(() => socket.destroy(), giveUpAfterMs);
      socket.on('connect', () => {
        openedAt = performance.now();
        if (kind === 'nothing') return;
        if (kind === 'body') socket.write('POST /api/agents HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":"');
        timer = setInterval(() => {
          if (kind === 'body') socket.write('x');
          else socket.write(sent++ === 0 ? 'GET /api/tools HTTP/1.1\r\nHost: gateway\r\n' : `X-Slow-${sent}: yes\r\n`);
        }, TRICKLE_EVERY_MS);
      });
      socket.on('data', (chunk) => (received += chunk.toString('latin1')));
      socket.on('error', () => {});
      socket.on('close', () => {
        clearInterval(timer);
        const closedBy = performance.now() - openedAt;
        clearTimeout(giveUp);
        resolve({ kind, closedAfterMs: closedBy < giveUpAfterMs ? Math.round(closedBy) : undefined, statusLine: received.split('\r\n')[0] ?? '' });
      });
    });
  }

  it('answers 408 and disconnects 50 clients trickling headers, a body or nothing, within the request timeout and one check', async () => {
    const bound = REQUEST_TIMEOUT_MS + SLOW_CLIENT_CHECK_INTERVAL_MS;
    const giveUpAfterMs = bound + SCHEDULING_SLACK_MS + 2_000;
    const kinds: Trickle[] = [...Array<Trickle>(20).fill('body'), ...Array<Trickle>(20).fill('headers'), ...Array<Trickle>(10).fill('nothing')];
    const outcomes = await Promise.all(kinds.map((kind) => trickle(kind, giveUpAfterMs)));

    const late = outcomes.filter(({ closedAfterMs }) => closedAfterMs === undefined || closedAfterMs > bound + SCHEDULING_SLACK_MS);
    expect(late).toEqual([]);
    // Not cut before its time either: each had its full timeout (timers may fire a little early).
    expect(outcomes.filter(({ closedAfterMs }) => closedAfterMs! < REQUEST_TIMEOUT_MS - 100)).toEqual([]);
    expect(new Set(outcomes.map(({ statusLine }) => statusLine))).toEqual(new Set(['HTTP/1.1 408 Request Timeout']));
  }, 20_000);

  it('serves a request whose body arrives slowly but within the timeout', async () => {
    const body = JSON.stringify({ query: '{ __typename }' }).padEnd(60, ' ');
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let received = '';
      socket.on('connect', async () => {
        socket.write(`POST /graphql HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`);
        // Six pieces over 1.2 s: the last arrives well before the 2 s bound, after at least one check has run.
        for (let piece = 0; piece < 6; piece++) {
          await new Promise((wait) => setTimeout(wait, TRICKLE_EVERY_MS));
          socket.write(body.slice(piece * 10, piece * 10 + 10));
        }
      });
      socket.on('data', (chunk) => (received += chunk.toString()));
      socket.on('error', reject);
      socket.on('close', () => resolve(received));
    });
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    expect(answer).toContain('{"data":{"__typename":"Query"}');
  });
});
