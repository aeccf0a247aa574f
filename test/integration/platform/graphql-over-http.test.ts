import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApolloClient, gql, HttpLink, InMemoryCache } from '@apollo/client';
import type { AddressInfo } from 'node:net';
import { serverAudits } from 'graphql-http';
import { bootstrapAgent } from '../../factories/agents.js';
import { createBooking } from '../../factories/bookings.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

/**
 * graphql-http's audit suite for the GraphQL-over-HTTP specification, every level (MUST, SHOULD, MAY),
 * against the real server on a real socket: fetch, not inject, so headers and bodies are what a client
 * sends.
 */
describe('GraphQL over HTTP audits (graphql-http)', () => {
  let t: TestApp;
  let url: string;
  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/graphql`;
  });
  afterAll(() => t.close());

  it('meets every audit', async () => {
    const unmet: string[] = [];
    for (const audit of serverAudits({ url: () => url })) {
      const result = await audit.fn();
      if (result.status !== 'ok') unmet.push(`${audit.id} ${audit.name}: ${result.reason}`);
    }
    expect(unmet).toEqual([]);
  });

  it('knows the directives of the GraphQL specification: @skip and @include in documents, all of them in introspection', async () => {
    const post = async (query: string, variables: Record<string, unknown> = {}) =>
      (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) })).json() as Promise<{ data?: Record<string, unknown>; errors?: unknown }>;
    const query = 'query($with: Boolean!) { kept: __typename @include(if: $with) dropped: __typename @skip(if: $with) }';
    expect(await post(query, { with: true })).toMatchObject({ data: { kept: 'Query' } });
    expect((await post(query, { with: true })).data).not.toHaveProperty('dropped');
    expect((await post(query, { with: false })).data).toEqual({ dropped: 'Query' });
    const introspected = await post('{ __schema { directives { name } } }');
    expect((introspected.data!.__schema as { directives: { name: string }[] }).directives.map((directive) => directive.name)).toEqual(
      expect.arrayContaining(['include', 'skip', 'deprecated', 'specifiedBy', 'oneOf']),
    );
  });

  it("answers Apollo Client's page whose fields @include chooses as its variables say, reading the columns the document names", async () => {
    const agent = await bootstrapAgent(t);
    const booking = await createBooking(t, agent, '2031-05-01T10:00:00Z', '2031-05-01T11:00:00Z');
    // Apollo Client's normalised cache, as a frontend runs it: it adds __typename to every selection.
    const client = new ApolloClient({ cache: new InMemoryCache(), link: new HttpLink({ uri: url, headers: bearer(agent.token) }) });
    const PAGE = gql`
      query Page($withTimes: Boolean!) {
        bookings(first: 5) {
          edges {
            node {
              id
              status
              endsAt @include(if: $withTimes)
              createdAt @include(if: $withTimes)
            }
          }
        }
      }
    `;
    const nodes = async (withTimes: boolean) =>
      ((await client.query({ query: PAGE, variables: { withTimes }, fetchPolicy: 'network-only' })).data as { bookings: { edges: { node: Record<string, unknown> }[] } }).bookings.edges.map(
        (edge) => edge.node,
      );
    t.sql.reset();
    expect(await nodes(false)).toEqual([{ __typename: 'Booking', id: booking.id, status: 'confirmed' }]);
    // @include is not read when the columns are chosen: its fields are read (not answered) either way.
    const page = t.sql.statements.find((statement) => /from bookings/.test(statement))!;
    expect(/select (.*?) from bookings/s.exec(page)![1]!.split(',').map((column) => column.trim())).toEqual(['id', 'agent_id', 'starts_at', 'ends_at', 'status', 'created_at']);
    expect(await nodes(true)).toEqual([{ __typename: 'Booking', id: booking.id, status: 'confirmed', endsAt: booking.endsAt, createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/) }]);
    // The first variables again: nothing of the second answer stays behind.
    expect(await nodes(false)).toEqual([{ __typename: 'Booking', id: booking.id, status: 'confirmed' }]);
  });
});
