import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sha256Hex } from '../../../src/platform/auth/credentials.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { AgentSettingsVisibilityDocument, CreateAgentDocument, MeDocument, MeWithGrandchildrenDocument } from '../../generated/graphql.js';
import { apiKey, bearer, startTestApp, type TestApp } from '../../harness.js';

const post = (t: TestApp, payload: unknown, headers: Record<string, string> = {}) =>
  t.rest({ method: 'POST', url: '/api/agents', payload: payload as object, headers });

const countAgents = async (t: TestApp) => (await t.query<{ n: number }>('select count(*)::int as n from agents'))[0]!.n;

describe('bootstrap of a new installation', () => {
  let t: TestApp;
  let winnerToken = '';
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('lets exactly one of 20 simultaneous bootstrap requests claim the first agent', async () => {
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => post(t, { name: `contender-${i}`, bootstrap: true })));
    const winners = responses.filter((response) => response.statusCode === 201);
    winnerToken = winners[0]?.json().public_token;
    const losers = responses.filter((response) => response.statusCode !== 201);
    expect(winners).toHaveLength(1);
    expect(losers.map((response) => response.statusCode)).toEqual(Array(19).fill(409));
    for (const loser of losers) {
      expect(loser.json()).toEqual({ error: 'bootstrap_claimed', message: expect.any(String) });
      expect(loser.body).not.toContain('public_token');
    }
    expect(await countAgents(t)).toBe(1);
  });

  it('answers bootstrap_claimed afterwards whatever credential is sent', async () => {
    expect(winnerToken).toMatch(/^agt_/);
    const variants: Record<string, string>[] = [
      {},
      bearer(winnerToken),
      apiKey(winnerToken),
      bearer('agt_not-a-real-token'),
      { authorization: 'Basic dXNlcjpwYXNz' },
      { ...bearer(winnerToken), ...apiKey(winnerToken) },
    ];
    for (const headers of variants) {
      const response = await post(t, { name: 'late', bootstrap: true }, headers);
      expect(response.statusCode).toBe(409);
      expect(response.json().error).toBe('bootstrap_claimed');
    }
    expect(await countAgents(t)).toBe(1);
  });
});

describe('POST /api/agents', () => {
  let t: TestApp;
  let root: AgentWithToken;
  beforeAll(async () => {
    t = await startTestApp();
    root = await bootstrapAgent(t);
  });
  afterAll(() => t.close());

  describe('the Agent response', () => {
    it('has exactly the seed fields, a fresh agt_ token and the literal next_step', async () => {
      const response = await post(t, { name: 'shape' }, bearer(root.token));
      expect(response.statusCode).toBe(201);
      const body = response.json();
      expect(Object.keys(body).sort()).toEqual(['created_at', 'id', 'next_step', 'public_token']);
      expect(body.public_token).toMatch(/^agt_[A-Za-z0-9_-]{43,}$/);
      expect(Buffer.from(body.public_token.slice(4), 'base64url').length).toBeGreaterThanOrEqual(32);
      expect(new Date(body.created_at).toISOString()).toBe(body.created_at);
      expect(body.next_step).toEqual({
        save_public_token: true,
        authorization: 'Authorization: Bearer <public_token>',
        x_api_key: 'X-API-Key: <public_token>',
        message: expect.stringMatching(/\S/),
      });
    });

    it('stores the token only as its SHA-256 hash', async () => {
      const created = await createAgent(t, root);
      const [row] = await t.query<Record<string, unknown>>('select * from agents where id = $1', [created.id]);
      expect(row!.token_hash).toBe(sha256Hex(created.token));
      expect(JSON.stringify(row)).not.toContain(created.token);
    });

    it('returns a different token for every agent', async () => {
      const [a, b] = await Promise.all([createAgent(t, root), createAgent(t, root)]);
      expect(a.token).not.toBe(b.token);
    });
  });

  describe('child agents', () => {
    it('records the authenticated caller as parent (Bearer)', async () => {
      const child = await createAgent(t, root);
      const [row] = await t.query<{ parent_id: string }>('select parent_id from agents where id = $1', [child.id]);
      expect(row!.parent_id).toBe(root.id);
    });

    it('accepts the X-API-Key header and a grandchild records its own parent', async () => {
      const child = await createAgent(t, root);
      const response = await post(t, { name: 'grandchild' }, apiKey(child.token));
      expect(response.statusCode).toBe(201);
      const [row] = await t.query<{ parent_id: string }>('select parent_id from agents where id = $1', [response.json().id]);
      expect(row!.parent_id).toBe(child.id);
    });

    it('keeps metadata and config as given', async () => {
      const response = await post(t, { name: 'meta', metadata: { team: 'ops', n: 1 }, config: { tz: 'UTC' } }, bearer(root.token));
      const [row] = await t.query<{ metadata: unknown; config: unknown }>('select metadata, config from agents where id = $1', [
        response.json().id,
      ]);
      expect(row).toEqual({ metadata: { team: 'ops', n: 1 }, config: { tz: 'UTC' } });
    });
  });

  describe('credentials', () => {
    it.each([
      ['no credential', {}, /missing credential/],
      ['an unknown token', bearer('agt_unknown'), /invalid credential/],
      ['an unknown X-API-Key', apiKey('agt_unknown'), /invalid credential/],
      ['a non-Bearer scheme', { authorization: 'Basic abc' }, /unparseable credential/],
      ['an empty Bearer', { authorization: 'Bearer ' }, /unparseable credential/],
    ])('answers 401 unauthorized for %s', async (_label, headers, message) => {
      const before = await countAgents(t);
      const response = await post(t, { name: 'nope' }, headers as Record<string, string>);
      expect(response.statusCode).toBe(401);
      expect(response.json()).toEqual({ error: 'unauthorized', message: expect.stringMatching(message) });
      expect(await countAgents(t)).toBe(before);
    });

    it('stops accepting a cached credential as soon as its agent changes in the database', async () => {
      const agent = await createAgent(t, root, 'rotated');
      const me = () => t.rest({ method: 'GET', url: '/api/bookings', headers: bearer(agent.token) });
      expect((await me()).statusCode).toBe(200);
      expect((await me()).statusCode).toBe(200); // now served from the process's credential cache
      // An operator rotates the token by hand: the trigger's NOTIFY drops the cached entry.
      await t.query('update agents set token_hash = $1 where id = $2', [sha256Hex('agt_rotated-elsewhere'), agent.id]);
      const deadline = Date.now() + 5_000;
      while ((await me()).statusCode === 200 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect((await me()).statusCode).toBe(401);
    });

    it('answers 401 when both headers are sent, even with a valid token', async () => {
      const response = await post(t, { name: 'both' }, { ...bearer(root.token), ...apiKey(root.token) });
      expect(response.statusCode).toBe(401);
      expect(response.json().error).toBe('unauthorized');
    });
  });

  describe('idempotency', () => {
    it('answers 409 conflict for a reused idempotency_key and creates nothing', async () => {
      const first = await post(t, { name: 'once', idempotency_key: 'key-1' }, bearer(root.token));
      expect(first.statusCode).toBe(201);
      const before = await countAgents(t);
      const again = await post(t, { name: 'once', idempotency_key: 'key-1' }, bearer(root.token));
      expect(again.statusCode).toBe(409);
      expect(again.json()).toEqual({ error: 'conflict', message: expect.any(String) });
      expect(await countAgents(t)).toBe(before);
    });

    it('treats the Idempotency-Key header like the body key', async () => {
      const first = await post(t, { name: 'header' }, { ...bearer(root.token), 'idempotency-key': 'key-2' });
      expect(first.statusCode).toBe(201);
      const viaBody = await post(t, { name: 'header', idempotency_key: 'key-2' }, bearer(root.token));
      expect(viaBody.statusCode).toBe(409);
      const viaHeader = await post(t, { name: 'header' }, { ...bearer(root.token), 'idempotency-key': 'key-2' });
      expect(viaHeader.statusCode).toBe(409);
    });

    it('lets exactly one of 10 simultaneous requests with one key win', async () => {
      const responses = await Promise.all(
        Array.from({ length: 10 }, () => post(t, { name: 'race', idempotency_key: 'key-race' }, bearer(root.token))),
      );
      expect(responses.filter((response) => response.statusCode === 201)).toHaveLength(1);
      expect(responses.filter((response) => response.statusCode === 409)).toHaveLength(9);
    });

    it('refuses a header and body key that disagree', async () => {
      const response = await post(t, { name: 'x', idempotency_key: 'a' }, { ...bearer(root.token), 'idempotency-key': 'b' });
      expect(response.statusCode).toBe(400);
      expect(response.json().errors.idempotency_key).toMatch(/Idempotency-Key/);
    });
  });

  describe('validation', () => {
    it.each([
      ['an unknown property', { name: 'x', colour: 'red' }, 'colour', 'is not allowed'],
      ['a missing name', {}, 'name', 'is required'],
      ['an empty name', { name: '' }, 'name', /fewer than 1/],
      ['a name of 121 characters', { name: 'x'.repeat(121) }, 'name', /more than 120/],
      ['a numeric name (no coercion)', { name: 42 }, 'name', /string/],
      ['bootstrap false', { name: 'x', bootstrap: false }, 'bootstrap', 'must be true'],
      ['bootstrap "true" as text', { name: 'x', bootstrap: 'true' }, 'bootstrap', /boolean|must be true/],
      ['metadata that is not an object', { name: 'x', metadata: 'nope' }, 'metadata', /object/],
      ['an idempotency_key of 256 characters', { name: 'x', idempotency_key: 'k'.repeat(256) }, 'idempotency_key', /more than 255/],
    ])('answers 400 naming the field for %s', async (_label, payload, field, message) => {
      const before = await countAgents(t);
      const response = await post(t, payload, bearer(root.token));
      expect(response.statusCode).toBe(400);
      const body = response.json();
      expect(Object.keys(body)).toEqual(['errors']);
      expect(body.errors[field as string]).toEqual(typeof message === 'string' ? message : expect.stringMatching(message));
      expect(await countAgents(t)).toBe(before);
    });

    it('answers 400 for a body that is not JSON', async () => {
      const response = await t.rest({
        method: 'POST',
        url: '/api/agents',
        headers: { 'content-type': 'application/json', ...bearer(root.token) },
        payload: '{"name": ',
      });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({ errors: { body: 'must be valid JSON' } });
    });

    it('answers 400 for a body that is an array', async () => {
      const response = await post(t, [{ name: 'x' }], bearer(root.token));
      expect(response.statusCode).toBe(400);
      expect(response.json().errors.body).toMatch(/object/);
    });
  });

  describe('GraphQL', () => {
    it('createAgent makes a child of the caller and returns the token once', async () => {
      const result = await t.gql(CreateAgentDocument, { input: { name: 'gql-child', metadata: { via: 'graphql' } } }, bearer(root.token));
      expect(result.errors).toBeUndefined();
      const payload = result.data!.createAgent;
      expect(payload.publicToken).toMatch(/^agt_/);
      expect(payload.agent).toEqual({ id: expect.any(String), name: 'gql-child', metadata: { via: 'graphql' }, config: {}, parent: { id: root.id } });
      expect(payload.nextStep).toEqual({
        savePublicToken: true,
        authorization: 'Authorization: Bearer <public_token>',
        xApiKey: 'X-API-Key: <public_token>',
        message: expect.any(String),
      });
    });

    it('answers bootstrap_claimed with the REST code in extensions.code', async () => {
      const result = await t.gql(CreateAgentDocument, { input: { name: 'late', bootstrap: true } });
      expect(result.data).toBeNull();
      expect(result.errors?.[0]?.extensions).toEqual({ code: 'bootstrap_claimed' });
    });

    it('answers validation with the field map in extensions.errors', async () => {
      const result = await t.gql(CreateAgentDocument, { input: { name: 'x'.repeat(121) } }, bearer(root.token));
      expect(result.errors?.[0]?.extensions).toEqual({ code: 'validation', errors: { name: 'must be 1 to 120 characters' } });
    });

    it('answers unauthorized for me without a credential', async () => {
      const result = await t.gql(MeDocument);
      expect(result.errors?.[0]?.extensions).toEqual({ code: 'unauthorized' });
    });

    it('me returns the caller with its parent and children', async () => {
      const parent = await createAgent(t, root, 'parent');
      const kids = [await createAgent(t, parent, 'kid-1'), await createAgent(t, parent, 'kid-2')];
      const result = await t.gql(MeDocument, undefined, apiKey(parent.token));
      expect(result.errors).toBeUndefined();
      expect(result.data!.me).toMatchObject({
        id: parent.id,
        name: 'parent',
        parent: { id: root.id, name: 'root' },
        children: kids.map((kid, i) => ({ id: kid.id, name: `kid-${i + 1}`, parent: { id: parent.id } })),
      });
    });

    it('shows config and metadata to the agent itself and its parent only', async () => {
      const parent = await createAgent(t, root, 'settings-parent');
      const child = (
        await post(t, { name: 'settings-child', config: { secret: 'child' }, metadata: { team: 'a' } }, bearer(parent.token))
      ).json();
      const asChild = await t.gql(AgentSettingsVisibilityDocument, undefined, bearer(child.public_token));
      expect(asChild.data!.me).toEqual({ config: { secret: 'child' }, metadata: { team: 'a' }, parent: { config: null, metadata: null }, children: [] });
      const asParent = await t.gql(AgentSettingsVisibilityDocument, undefined, bearer(parent.token));
      expect(asParent.data!.me.children).toEqual([{ config: { secret: 'child' } }]);
    });

    it('loads children and parents in a constant number of SQL statements', async () => {
      const statementsFor = async (childCount: number) => {
        const parent = await createAgent(t, root);
        for (let i = 0; i < childCount; i++) {
          const child = await createAgent(t, parent);
          await createAgent(t, child);
          await createAgent(t, child);
        }
        t.sql.reset();
        const result = await t.gql(MeWithGrandchildrenDocument, undefined, bearer(parent.token));
        expect(result.errors).toBeUndefined();
        expect(result.data!.me.children).toHaveLength(childCount);
        expect(result.data!.me.children.every((child) => child.children.length === 2)).toBe(true);
        // What this counts is the agent loaders' statements: not the credential lookup (cached per
        // process), nor what the background loops (webhook dispatch, reminder sweep) send meanwhile.
        return t.sql.statements.filter((sql) => /\bfrom agents\b/.test(sql) && !/token_hash = \$1/.test(sql));
      };
      const few = await statementsFor(2);
      const many = await statementsFor(12);
      expect(many).toHaveLength(few.length);
      // children, grandchildren, parents of the grandchildren's level (the children's parent is the primed caller)
      expect(many).toHaveLength(3);
    });
  });
});

describe('bootstrap with a credential on a new installation', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('answers 401: bootstrap takes no credential', async () => {
    const response = await post(t, { name: 'root', bootstrap: true }, bearer('agt_whatever'));
    expect(response.statusCode).toBe(401);
    expect(await countAgents(t)).toBe(0);
  });
});
