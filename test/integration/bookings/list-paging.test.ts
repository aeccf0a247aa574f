import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import LinkHeader from 'http-link-header';
import createClient from 'openapi-fetch';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { createBooking } from '../../factories/bookings.js';
import { TestClock } from '../../factories/clock.js';
import type { paths } from '../../generated/openapi.js';
import { BookingsDocument, CreateBookingDocument } from '../../generated/graphql.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

/** The target of a response's `Link: <…>; rel="next"` as a client resolves it (RFC 8288 §3.1), or null. */
function nextLink(response: Response): URL | null {
  const header = response.headers.get('link');
  if (header === null) return null;
  const [next, ...more] = LinkHeader.parse(header).rel('next');
  if (!next || more.length) throw new Error(`not one rel="next" in ${header}`);
  return new URL(next.uri, response.url);
}

interface Item {
  id: string;
  startsAt: string;
}

/**
 * Issue 24: `GET /api/bookings?limit=2` answered two items and no sign that more exist. The envelope
 * stays `{items}`; a `Link: <…>; rel="next"` header leads to the next page, with the cursor GraphQL's
 * `bookings` hands out.
 */
describe('paged lists: Link rel="next" (REST), nextCursor (MCP), one cursor per list', () => {
  let t: TestApp;
  let base: string;
  let agent: AgentWithToken;
  /** Every booking of `agent`, as one page of the largest limit lists them. */
  let all: Item[];
  const clock = new TestClock(new Date('2031-01-01T00:00:00Z'));

  const get = (path: string, token = agent.token) => fetch(new URL(path, base), { headers: bearer(token) });
  /** Follows `Link` headers from `path`: the pages' items, and the link each page carried. */
  const follow = async (path: string) => {
    const pages: { items: Item[]; link: URL | null; body: Record<string, unknown> }[] = [];
    let url: URL | null = new URL(path, base);
    while (url) {
      const response = await fetch(url, { headers: bearer(agent.token) });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { items: Item[] };
      const link = nextLink(response);
      pages.push({ items: body.items, link, body });
      url = link;
      if (pages.length > 100) throw new Error('the links do not end');
    }
    return pages;
  };

  beforeAll(async () => {
    t = await startTestApp({ jobs: false, clock });
    const root = await bootstrapAgent(t);
    agent = await createAgent(t, root);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;

    // A calendar with what makes keyset paging hard: three bookings starting at the same instant
    // (two cancelled, one confirmed), series, cancelled bookings, and bookings on both sides of a window.
    const hour = (h: number) => new Date(Date.UTC(2031, 0, 5, 9) + h * 3_600_000).toISOString();
    for (let i = 0; i < 3; i++) {
      const tie = await createBooking(t, agent, hour(0), hour(1));
      if (i < 2) expect((await t.rest({ method: 'DELETE', url: `/api/bookings/${tie.id}`, headers: bearer(agent.token) })).statusCode).toBe(204);
    }
    for (const h of [2, 4, 5, 30, 31, 50, 60]) await createBooking(t, agent, hour(h), hour(h + 1));
    const cancelled = await createBooking(t, agent, hour(7), hour(8));
    await t.rest({ method: 'DELETE', url: `/api/bookings/${cancelled.id}`, headers: bearer(agent.token) });
    for (const [h, rrule] of [[10, 'FREQ=DAILY;COUNT=5'], [3, 'FREQ=WEEKLY;COUNT=3']] as const) {
      const series = await t.gql(CreateBookingDocument, { input: { agentId: agent.id, startsAt: hour(h), endsAt: hour(h + 1), rrule } }, bearer(agent.token));
      expect(series.errors).toBeUndefined();
    }
    all = ((await (await get('/api/bookings?limit=100')).json()) as { items: Item[] }).items;
  });
  afterAll(() => t.close());

  it('visits every booking exactly once by following Link from the first page, ties, cancelled and series included', async () => {
    expect(all).toHaveLength(13);
    const pages = await follow('/api/bookings?limit=2');
    expect(pages.flatMap((page) => page.items.map((item) => item.id))).toEqual(all.map((item) => item.id));
    expect(pages.map((page) => page.items.length)).toEqual([2, 2, 2, 2, 2, 2, 1]);
    // The envelope stays exactly {items}; the last page has no Link, every other one has.
    for (const page of pages) expect(Object.keys(page.body)).toEqual(['items']);
    expect(pages.map((page) => page.link === null)).toEqual([false, false, false, false, false, false, true]);
    // The link keeps the query as the server read it and sets `after`.
    expect(pages[0]!.link!.pathname).toBe('/api/bookings');
    expect([...pages[0]!.link!.searchParams.keys()].sort()).toEqual(['after', 'limit']);
  });

  it('pages a window [from, to) the same way, keeping from and to in every link', async () => {
    const from = '2031-01-05T10:30:00.000Z';
    const to = '2031-01-06T12:00:00.000Z';
    const window = ((await (await get(`/api/bookings?limit=100&from=${from}&to=${to}`)).json()) as { items: Item[] }).items;
    expect(window.length).toBeGreaterThan(4);
    for (const limit of [1, 2, 3, window.length - 1, window.length]) {
      const pages = await follow(`/api/bookings?limit=${limit}&from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`);
      expect(pages.flatMap((page) => page.items.map((item) => item.id))).toEqual(window.map((item) => item.id));
      expect(pages.at(-1)!.link).toBeNull();
      for (const page of pages.slice(0, -1)) {
        expect(page.link!.searchParams.get('from')).toBe(from);
        expect(page.link!.searchParams.get('to')).toBe(to);
      }
    }
  });

  it('hands out the cursor GraphQL’s bookings does, and each accepts the other’s', async () => {
    const rest = await get('/api/bookings?limit=2');
    const restCursor = nextLink(rest)!.searchParams.get('after')!;
    const graphql = await t.gql(BookingsDocument, { first: 2 }, bearer(agent.token));
    expect(graphql.data!.bookings.pageInfo).toEqual({ hasNextPage: true, endCursor: restCursor });
    const second = await t.gql(BookingsDocument, { first: 2, after: restCursor }, bearer(agent.token));
    const restSecond = (await (await get(`/api/bookings?limit=2&after=${graphql.data!.bookings.pageInfo.endCursor}`)).json()) as { items: Item[] };
    expect(second.data!.bookings.edges.map((edge) => edge.node.id)).toEqual(restSecond.items.map((item) => item.id));
    expect(restSecond.items.map((item) => item.id)).toEqual(all.slice(2, 4).map((item) => item.id));
  });

  it('refuses a cursor it did not hand out: 400 naming after', async () => {
    for (const after of ['nope', Buffer.from('2031-01-05T09:00:00.000Z|not-a-uuid').toString('base64url'), 'x'.repeat(201)]) {
      const response = await get(`/api/bookings?after=${after}`);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { errors: Record<string, string> }).errors).toEqual({ after: expect.any(String) });
    }
    // Another list's cursor is no booking cursor.
    const proposalCursor = Buffer.from(`proposal:2031-01-01T00:00:00.000Z|${agent.id}`).toString('base64url');
    expect((await get(`/api/bookings?after=${proposalCursor}`)).status).toBe(400);
  });

  it('is followed by a client generated from /openapi.json, which documents the Link header', async () => {
    const document = (await (await fetch(new URL('/openapi.json', base))).json()) as {
      paths: Record<string, { get: { parameters: { name: string }[]; responses: Record<string, { headers?: Record<string, unknown> }> } }>;
    };
    for (const path of ['/api/bookings', '/api/proposals', '/api/bookings/{id}/occurrences']) {
      expect(document.paths[path]!.get.responses['200']!.headers).toEqual({ Link: { schema: { type: 'string' }, description: expect.stringContaining('rel="next"') } });
      expect(document.paths[path]!.get.parameters.map((parameter) => parameter.name)).toContain('after');
    }

    const client = createClient<paths>({ baseUrl: base });
    type Query = NonNullable<paths['/api/bookings']['get']['parameters']['query']>;
    let query: Query = { limit: 3 };
    const seen: string[] = [];
    for (;;) {
      const { data, response } = await client.GET('/api/bookings', { headers: bearer(agent.token), params: { query } });
      seen.push(...data!.items.map((item) => item.id));
      const next = nextLink(response);
      if (!next) break;
      const params = Object.fromEntries(next.searchParams);
      query = { ...params, limit: Number(params.limit) };
    }
    expect(seen).toEqual(all.map((item) => item.id));
  });

  it('pages MCP’s list_bookings with nextCursor, accepted back as after', async () => {
    const client = new Client({ name: 'paging-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', base), { requestInit: { headers: bearer(agent.token) } }));
    try {
      const seen: string[] = [];
      let after: string | undefined;
      let pages = 0;
      for (;;) {
        const result = await client.callTool({ name: 'list_bookings', arguments: { limit: 4, ...(after ? { after } : {}) } });
        expect(result.isError).not.toBe(true);
        const page = result.structuredContent as { items: Item[]; nextCursor: string | null };
        seen.push(...page.items.map((item) => item.id));
        if (++pages > 20) throw new Error('nextCursor does not end');
        if (page.nextCursor === null) break;
        after = page.nextCursor;
      }
      expect(seen).toEqual(all.map((item) => item.id));
      expect(pages).toBe(4);
      const refused = await client.callTool({ name: 'list_bookings', arguments: { after: 'nope' } });
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toMatchObject({ error: 'validation', errors: { after: expect.any(String) } });
    } finally {
      await client.close();
    }
  });

  it('pages proposals newest first, ties on createdAt included, and says nothing more on the last page', async () => {
    const proposer = await createAgent(t, agent);
    // The clock stands still: every proposal has the same createdAt, so only the id orders them.
    const created: string[] = [];
    for (let i = 0; i < 7; i++) {
      const startsAt = new Date(Date.UTC(2031, 1, 1, 9) + i * 3_600_000);
      const response = await t.rest({
        method: 'POST',
        url: '/api/proposals',
        headers: bearer(proposer.token),
        payload: { targetAgentId: agent.id, startsAt: startsAt.toISOString(), endsAt: new Date(startsAt.getTime() + 1_800_000).toISOString() },
      });
      expect(response.statusCode).toBe(201);
      created.push(response.json().id);
    }
    const everything = ((await (await get('/api/proposals?role=outgoing&limit=100', proposer.token)).json()) as { items: Item[] }).items.map((item) => item.id);
    expect([...everything].sort()).toEqual([...created].sort());
    const seen: string[] = [];
    let url: URL | null = new URL('/api/proposals?role=outgoing&limit=3', base);
    const links: (URL | null)[] = [];
    while (url) {
      const response = await fetch(url, { headers: bearer(proposer.token) });
      seen.push(...((await response.json()) as { items: Item[] }).items.map((item) => item.id));
      url = nextLink(response);
      links.push(url);
    }
    expect(seen).toEqual(everything);
    expect(links.map((link) => link?.searchParams.get('role') ?? null)).toEqual(['outgoing', 'outgoing', null]);
  });

  it('pages a series’ occurrences, and a single booking’s one occurrence has no next page', async () => {
    const series = await t.gql(
      CreateBookingDocument,
      { input: { agentId: agent.id, startsAt: '2031-03-03T09:00:00Z', endsAt: '2031-03-03T09:30:00Z', rrule: 'FREQ=DAILY;COUNT=7' } },
      bearer(agent.token),
    );
    const id = series.data!.createBooking.id;
    const seen: string[] = [];
    const sizes: number[] = [];
    let url: URL | null = new URL(`/api/bookings/${id}/occurrences?limit=3`, base);
    while (url) {
      const response = await fetch(url, { headers: bearer(agent.token) });
      const items = ((await response.json()) as { items: { startsAt: string }[] }).items;
      seen.push(...items.map((item) => item.startsAt));
      sizes.push(items.length);
      url = nextLink(response);
    }
    expect(sizes).toEqual([3, 3, 1]);
    expect(seen).toEqual(Array.from({ length: 7 }, (_, day) => new Date(Date.UTC(2031, 2, 3 + day, 9)).toISOString()));
    const single = all.find((item) => item.startsAt > clock.now().toISOString())!;
    const response = await get(`/api/bookings/${single.id}/occurrences?limit=1`);
    expect(response.headers.get('link')).toBeNull();
  });
});
