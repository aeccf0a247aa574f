import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import { serverAudits } from 'graphql-http';
import { startTestApp, type TestApp } from '../../harness.js';

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
});
