import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TestClock } from '../../factories/clock.js';
import { Mailbox } from '../../factories/mailbox.js';
import { signIn, submitTool, toolBody, type SignedInUser } from '../../factories/users.js';
import { SubmitToolDocument, ToggleVoteDocument, ToolsDocument, ViewerDocument } from '../../generated/graphql.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

const NOW = '2030-06-15T12:00:00.000Z';

describe('tool directory', () => {
  let t: TestApp;
  let alice: SignedInUser;
  const mailbox = new Mailbox();
  const clock = new TestClock(new Date(NOW));

  beforeAll(async () => {
    t = await startTestApp({ mailer: mailbox, clock, jobs: false });
    alice = await signIn(t, mailbox, 'alice@example.com');
  });
  afterAll(() => t.close());

  const post = (path: string, payload: object, user?: SignedInUser, headers: Record<string, string> = {}) =>
    t.rest({ method: 'POST', url: path, payload, headers: { ...(user ? bearer(user.token) : {}), ...headers } });
  const get = (path: string, user?: SignedInUser) => t.rest({ method: 'GET', url: path, headers: user ? bearer(user.token) : {} });
  const vote = (user: SignedInUser, toolId: number, headers: Record<string, string> = {}) => post(`/api/tools/${toolId}/vote`, {}, user, headers);

  describe('GET /api/categories', () => {
    it('lists the seeded categories with their tool counts', async () => {
      const response = await get('/api/categories');
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body.success).toBe(true);
      expect(body.categories).toHaveLength(10);
      expect(body.categories[0]).toEqual({ id: expect.any(Number), name: 'Coding', slug: 'coding', tool_count: expect.any(Number) });
    });
  });

  describe('POST /api/tools', () => {
    it('answers 201 with the full tool, approved at once, human by default', async () => {
      const response = await post('/api/tools', toolBody({ name: 'Code Buddy', url: 'https://codebuddy.example.com', capabilities: ['refactor'] }), alice);
      expect(response.statusCode).toBe(201);
      const { success, tool } = response.json();
      expect(success).toBe(true);
      expect(tool).toEqual({
        id: expect.any(Number),
        name: 'Code Buddy',
        url: 'https://codebuddy.example.com',
        description: expect.any(String),
        vote_count: 0,
        slug: 'code-buddy',
        category_name: 'Coding',
        category_slug: 'coding',
        submission_source: 'human',
        capabilities: ['refactor'],
        pricing_model: null,
        created_at: NOW,
        api_endpoint: null,
        auth_method: null,
        submitted_by_agent: null,
      });
      expect((await get(`/api/tools/${tool.id}`)).json()).toEqual({ success: true, tool });
    });

    it('marks a submission with X-Agent-Id as the agent’s', async () => {
      const response = await post('/api/tools', toolBody({ auth_method: 'api_key', pricing_model: 'usage_based', api_endpoint: 'https://api.x.example.com/v1' }), alice, {
        'x-agent-id': 'agent-007',
      });
      expect(response.json().tool).toMatchObject({ submission_source: 'agent', submitted_by_agent: 'agent-007', auth_method: 'api_key', pricing_model: 'usage_based' });
    });

    it('gives tools with the same name distinct slugs', async () => {
      const first = await submitTool(t, alice, { name: 'Twin' });
      const second = await submitTool(t, alice, { name: 'Twin' });
      expect([first.slug, second.slug]).toEqual(['twin', 'twin-2']);
    });

    it.each([
      ['no token', undefined, 401],
      ['a forged token', { ...({} as SignedInUser), token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl' }, 401],
    ])('answers 401 with %s', async (_label, user, status) => {
      const response = await post('/api/tools', toolBody(), user as SignedInUser | undefined);
      expect(response.statusCode).toBe(status);
      expect(response.json()).toEqual({ success: false, message: expect.any(String) });
    });

    it('answers 401 once the 7-day token has expired', async () => {
      const bob = await signIn(t, mailbox);
      clock.set(new Date(Date.parse(NOW) + 7 * 86_400_000 + 1000));
      try {
        const response = await post('/api/tools', toolBody(), bob);
        expect(response.statusCode).toBe(401);
        expect(response.json().message).toMatch(/expired/);
      } finally {
        clock.set(NOW);
      }
    });

    it.each([
      ['a missing name', { name: undefined }, /name/],
      ['a name of 256 characters', { name: 'n'.repeat(256) }, /name/],
      ['a description of 1001 characters', { description: 'd'.repeat(1001) }, /description/],
      ['a url that is not one', { url: 'not a url' }, /url/],
      ['an unknown category_id', { category_id: 999 }, /category_id/],
      ['a category_id given as text', { category_id: '1' }, /category_id/],
      ['an unknown auth_method', { auth_method: 'magic' }, /auth_method/],
      ['an unknown pricing_model', { pricing_model: 'priceless' }, /pricing_model/],
      ['capabilities that are not strings', { capabilities: [1, 2] }, /capabilities/],
    ])('answers 400 naming the field for %s', async (_label, overrides, field) => {
      const before = (await get('/api/stats')).json().stats.total_tools;
      const response = await post('/api/tools', { ...toolBody(), ...overrides }, alice);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ success: false, message: expect.stringMatching(field) });
      expect((await get('/api/stats')).json().stats.total_tools).toBe(before);
    });

    it('answers 409 for a URL already submitted, however it is spelled', async () => {
      await submitTool(t, alice, { url: 'https://dup.example.com/app' });
      for (const url of ['https://dup.example.com/app', 'HTTPS://DUP.example.com:443/app/', 'https://dup.example.com/app//']) {
        const response = await post('/api/tools', toolBody({ url }), alice);
        expect(response.statusCode).toBe(409);
        expect(response.json()).toEqual({ success: false, message: expect.stringMatching(/already submitted/) });
      }
    });
  });

  describe('GET /api/tools', () => {
    it('pages with the seed envelope and totals, filtered by category', async () => {
      const writers = await Promise.all([0, 1, 2].map(() => submitTool(t, alice, { category_id: 9 })));
      const page1 = (await get('/api/tools?category=search&limit=2&sort=newest')).json();
      expect(page1).toMatchObject({ success: true, page: 1, totalPages: 2, totalTools: 3 });
      expect(page1.tools).toHaveLength(2);
      const page2 = (await get('/api/tools?category=search&limit=2&page=2&sort=newest')).json();
      expect(page2.tools).toHaveLength(1);
      const ids = [...page1.tools, ...page2.tools].map((tool: { id: number }) => tool.id);
      expect(new Set(ids)).toEqual(new Set(writers.map((tool) => tool.id)));
      expect(page1.tools[0]).not.toHaveProperty('api_endpoint');
    });

    it.each([
      ['?limit=101', /limit/],
      ['?limit=0', /limit/],
      ['?limit=ten', /limit/],
      ['?page=0', /page/],
      ['?page=1.5', /page/],
      ['?sort=random', /sort/],
      ['?category=no-such-category', /category/],
    ])('answers 400 for %s', async (query, field) => {
      const response = await get(`/api/tools${query}`);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ success: false, message: expect.stringMatching(field) });
    });

    it('answers 404 for an unknown tool', async () => {
      for (const id of ['999999', 'abc']) {
        const response = await get(`/api/tools/${id}`);
        expect(response.statusCode).toBe(404);
        expect(response.json()).toEqual({ success: false, message: expect.any(String) });
      }
    });
  });

  describe('votes', () => {
    it('toggles: a second vote removes the first', async () => {
      const tool = await submitTool(t, alice);
      expect((await vote(alice, tool.id)).json()).toEqual({ success: true, voted: true, vote_count: 1 });
      expect((await vote(alice, tool.id)).json()).toEqual({ success: true, voted: false, vote_count: 0 });
      expect((await vote(alice, 9_999_999)).statusCode).toBe(404);
      expect((await post(`/api/tools/${tool.id}/vote`, {})).statusCode).toBe(401);
    });

    it('counts 50 simultaneous votes by 50 users as 50', async () => {
      const tool = await submitTool(t, alice);
      const voters = await Promise.all(Array.from({ length: 50 }, () => signIn(t, mailbox)));
      const responses = await Promise.all(voters.map((voter) => vote(voter, tool.id)));
      expect(responses.every((response) => response.json().voted === true)).toBe(true);
      const [row] = await t.query<{ vote_count: number; rows: number }>(
        'select vote_count, (select count(*)::int from votes where tool_id = $1) as rows from tools where id = $1',
        [tool.id],
      );
      expect(row).toEqual({ vote_count: 50, rows: 50 });
    });

    it('stays consistent when one user toggles 10 times at once', async () => {
      const tool = await submitTool(t, alice);
      const results = await Promise.all(Array.from({ length: 10 }, () => vote(alice, tool.id)));
      expect(results.filter((r) => r.json().voted).length).toBe(5);
      const [row] = await t.query<{ vote_count: number; rows: number }>(
        'select vote_count, (select count(*)::int from votes where tool_id = $1) as rows from tools where id = $1',
        [tool.id],
      );
      expect(row).toEqual({ vote_count: 0, rows: 0 });
    });

    it('ranks trending by recent votes, newer ones weighing more', async () => {
      const [older, newer] = [await submitTool(t, alice, { category_id: 6 }), await submitTool(t, alice, { category_id: 6 })];
      const voters = await Promise.all(Array.from({ length: 3 }, () => signIn(t, mailbox)));
      clock.set(new Date(Date.parse(NOW) - 6 * 86_400_000));
      for (const voter of voters) await vote(voter, older.id);
      clock.set(NOW);
      for (const voter of voters.slice(0, 2)) await vote(voter, newer.id);
      const byVotes = (await get('/api/tools?category=audio-speech&sort=votes')).json().tools.map((tool: { id: number }) => tool.id);
      const trending = (await get('/api/tools?category=audio-speech&sort=trending')).json().tools.map((tool: { id: number }) => tool.id);
      expect(byVotes.slice(0, 2)).toEqual([older.id, newer.id]);
      expect(trending.slice(0, 2)).toEqual([newer.id, older.id]);
      // Votes older than seven days no longer count.
      clock.set(new Date(Date.parse(NOW) + 8 * 86_400_000));
      try {
        const later = (await get('/api/tools?category=audio-speech&sort=trending')).json().tools.map((tool: { id: number }) => tool.id);
        expect(later.slice(0, 2)).toEqual([older.id, newer.id]);
      } finally {
        clock.set(NOW);
      }
    });
  });

  describe('leaderboard and stats', () => {
    it('ranks agent and human submissions separately and counts agent votes', async () => {
      const before = (await get('/api/stats')).json().stats;
      const agentTool = await submitTool(t, alice, {}, { 'x-agent-id': 'scout' });
      const voter = await signIn(t, mailbox);
      await vote(voter, agentTool.id, { 'x-agent-id': 'scout' });
      const board = (await get('/api/leaderboard?limit=100')).json();
      expect(board.success).toBe(true);
      expect(board.agents.every((tool: { submission_source: string }) => tool.submission_source === 'agent')).toBe(true);
      expect(board.humans.every((tool: { submission_source: string }) => tool.submission_source === 'human')).toBe(true);
      const counts = board.agents.map((tool: { vote_count: number }) => tool.vote_count);
      expect(counts).toEqual([...counts].sort((a: number, b: number) => b - a));
      expect((await get('/api/leaderboard?limit=101')).statusCode).toBe(400);
      const after = (await get('/api/stats')).json().stats;
      expect(after).toEqual({
        total_tools: before.total_tools + 1,
        total_votes: before.total_votes + 1,
        agent_submissions: before.agent_submissions + 1,
        agent_votes: before.agent_votes + 1,
      });
    });
  });

  describe('GraphQL', () => {
    it('lists tools with their category and the viewer’s votes in a constant number of statements', async () => {
      const fresh = await signIn(t, mailbox);
      const mine = await submitTool(t, fresh, { category_id: 4 });
      await vote(fresh, mine.id);
      t.sql.reset();
      const result = await t.gql(ToolsDocument, { limit: 50 }, bearer(fresh.token));
      expect(result.errors).toBeUndefined();
      const tools = result.data!.tools.tools;
      expect(tools.length).toBeGreaterThan(10);
      expect(tools.find((tool) => tool.id === mine.id)).toMatchObject({ viewerHasVoted: true, category: { slug: 'data-analytics' } });
      expect(tools.filter((tool) => tool.viewerHasVoted)).toHaveLength(1);
      // count, page, categories (batched), viewer, viewer's votes (batched)
      expect(t.sql.statements.length).toBeLessThanOrEqual(5);
    });

    it('bounds a tool URL alike in GraphQL and REST: 2,048 characters pass, 2,049 are refused naming url, nothing written', async () => {
      const urlOf = (length: number, host: string) => `https://${host}.example.com/${'p'.repeat(length - `https://${host}.example.com/`.length)}`;
      const longest = await t.gql(SubmitToolDocument, { input: { name: 'Long', url: urlOf(2048, 'gql-long'), description: 'x', categoryId: 2 } }, bearer(alice.token));
      expect(longest.errors).toBeUndefined();
      expect((await post('/api/tools', toolBody({ url: urlOf(2048, 'rest-long') }), alice)).statusCode).toBe(201);
      const before = (await get('/api/stats')).json().stats.total_tools;
      const tooLong = await t.gql(SubmitToolDocument, { input: { name: 'Longer', url: urlOf(2049, 'gql-longer'), description: 'x', categoryId: 2 } }, bearer(alice.token));
      expect(tooLong.errors?.[0]?.extensions?.code).toBe('validation');
      expect(tooLong.errors?.[0]?.message).toMatch(/url/);
      const endpoint = await t.gql(
        SubmitToolDocument,
        { input: { name: 'Endpoint', url: 'https://endpoint.example.com', apiEndpoint: urlOf(2049, 'api'), description: 'x', categoryId: 2 } },
        bearer(alice.token),
      );
      expect(endpoint.errors?.[0]?.message).toMatch(/api_endpoint|apiEndpoint/);
      // 2,000 apostrophes, which RFC 3986 allows in a query and WHATWG's parser percent-encodes there: the
      // stored, indexed form would be ~6,000 (other characters than ASCII are refused: a URL percent-encodes them).
      const wide = `https://wide.example.com/?q=${"'".repeat(2000)}`;
      const encoded = await t.gql(SubmitToolDocument, { input: { name: 'Wide', url: wide, description: 'x', categoryId: 2 } }, bearer(alice.token));
      expect(encoded.errors?.[0]?.extensions?.code).toBe('validation');
      expect(encoded.errors?.[0]?.message).toMatch(/url must be at most 2048 characters once percent-encoded/);
      const nonAscii = await t.gql(SubmitToolDocument, { input: { name: 'Wide', url: `https://wide.example.com/${'一'.repeat(10)}`, description: 'x', categoryId: 2 } }, bearer(alice.token));
      expect(nonAscii.errors?.[0]?.extensions?.errors).toEqual({ url: expect.stringMatching(/^must be an absolute http or https URL/) });
      const wideRest = await post('/api/tools', toolBody({ url: wide }), alice);
      expect(wideRest.statusCode).toBe(400);
      expect(wideRest.json().message).toMatch(/url/);
      const rest = await post('/api/tools', toolBody({ url: urlOf(2049, 'rest-longer') }), alice);
      expect(rest.statusCode).toBe(400);
      expect(rest.json().message).toMatch(/url/);
      expect((await get('/api/stats')).json().stats.total_tools).toBe(before);
    });

    it('submits and votes through the same services, and knows the viewer', async () => {
      const submitted = await t.gql(SubmitToolDocument, { input: { name: 'Gql Tool', url: 'https://gql-tool.example.com', description: 'x', categoryId: 2 } }, bearer(alice.token));
      expect(submitted.data!.submitTool).toMatchObject({ name: 'Gql Tool', submissionSource: 'human', category: { slug: 'writing' } });
      const toggled = await t.gql(ToggleVoteDocument, { toolId: submitted.data!.submitTool.id }, bearer(alice.token));
      expect(toggled.data!.toggleVote).toMatchObject({ voted: true, voteCount: 1, tool: { viewerHasVoted: true } });
      const duplicate = await t.gql(SubmitToolDocument, { input: { name: 'Again', url: 'https://GQL-tool.example.com/', description: 'x', categoryId: 2 } }, bearer(alice.token));
      expect(duplicate.errors?.[0]?.extensions).toEqual({ code: 'conflict' });
      const anonymous = await t.gql(ToggleVoteDocument, { toolId: submitted.data!.submitTool.id });
      expect(anonymous.errors?.[0]?.extensions).toEqual({ code: 'unauthorized' });
      expect((await t.gql(ViewerDocument, undefined, bearer(alice.token))).data!.viewer).toEqual({ id: alice.id, email: 'alice@example.com' });
      expect((await t.gql(ViewerDocument, undefined, bearer('not.a.jwt'))).data!.viewer).toBeNull();
    });
  });
});
