import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { createBooking } from '../../factories/bookings.js';
import { AcceptProposalDocument, CreateProposalDocument, ProposalsDocument } from '../../generated/graphql.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

describe('proposals', () => {
  let t: TestApp;
  let root: AgentWithToken;
  let day = 0;

  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
    root = await bootstrapAgent(t);
  });
  afterAll(() => t.close());

  /** A fresh one-hour range per call, so tests never share a slot. */
  const nextSlot = () => {
    const start = new Date(Date.UTC(2031, 0, 1, 9) + day++ * 86_400_000);
    return { startsAt: start.toISOString(), endsAt: new Date(start.getTime() + 3_600_000).toISOString() };
  };

  const propose = (proposer: AgentWithToken, target: AgentWithToken, slot = nextSlot(), headers: Record<string, string> = {}) =>
    t.rest({
      method: 'POST',
      url: '/api/proposals',
      headers: { ...bearer(proposer.token), ...headers },
      payload: { targetAgentId: target.id, ...slot },
    });

  const decide = (agent: AgentWithToken, id: string, decision: string, withJsonHeader = false) =>
    t.rest({
      method: 'PATCH',
      url: `/api/proposals/${id}/${decision}`,
      headers: { ...bearer(agent.token), ...(withJsonHeader ? { 'content-type': 'application/json' } : {}) },
    });

  const pair = async () => ({ proposer: await createAgent(t, root), target: await createAgent(t, root) });

  const bookingsOf = async (agent: AgentWithToken) =>
    (await t.rest({ method: 'GET', url: '/api/bookings', headers: bearer(agent.token) })).json().items as { id: string; agentId: string; startsAt: string }[];

  describe('POST /api/proposals', () => {
    it('creates a pending ProposalItem with the proposer from the credential and no booking', async () => {
      const { proposer, target } = await pair();
      const slot = nextSlot();
      const response = await propose(proposer, target, slot);
      expect(response.statusCode).toBe(201);
      const body = response.json();
      expect(Object.keys(body).sort()).toEqual(['createdAt', 'endsAt', 'id', 'proposerAgentId', 'startsAt', 'status', 'targetAgentId']);
      expect(body).toMatchObject({ proposerAgentId: proposer.id, targetAgentId: target.id, status: 'pending', ...slot });
      expect(await t.query('select id from bookings where agent_id in ($1, $2)', [proposer.id, target.id])).toEqual([]);
    });

    it.each([
      ['a proposerAgentId in the body', { proposerAgentId: 'x' }, 'proposerAgentId'],
      ['endsAt not after startsAt', { startsAt: '2031-05-01T10:00:00Z', endsAt: '2031-05-01T10:00:00Z' }, 'endsAt'],
      ['a date without offset', { startsAt: '2031-05-01T10:00:00' }, 'startsAt'],
      ['an unknown target', { targetAgentId: '00000000-0000-4000-8000-000000000000' }, 'targetAgentId'],
    ])('answers 400 for %s', async (_label, override, field) => {
      const { proposer, target } = await pair();
      const response = await t.rest({
        method: 'POST',
        url: '/api/proposals',
        headers: bearer(proposer.token),
        payload: { targetAgentId: target.id, ...nextSlot(), ...override },
      });
      expect(response.statusCode).toBe(400);
      expect(Object.keys(response.json().errors)).toEqual([field]);
    });

    it('answers 400 for a proposal to oneself and 401 without a credential', async () => {
      const agent = await createAgent(t, root);
      expect((await propose(agent, agent)).json().errors.targetAgentId).toMatch(/another agent/);
      expect((await t.rest({ method: 'POST', url: '/api/proposals', payload: { targetAgentId: agent.id, ...nextSlot() } })).statusCode).toBe(401);
    });

    it('replays an Idempotency-Key with the same body and refuses another body', async () => {
      const { proposer, target } = await pair();
      const slot = nextSlot();
      const first = await propose(proposer, target, slot, { 'idempotency-key': 'p-1' });
      const again = await propose(proposer, target, slot, { 'idempotency-key': 'p-1' });
      expect(again.statusCode).toBe(201);
      expect(again.json()).toEqual(first.json());
      expect((await propose(proposer, target, nextSlot(), { 'idempotency-key': 'p-1' })).statusCode).toBe(409);
      expect(await t.query('select id from proposals where proposer_agent_id = $1', [proposer.id])).toHaveLength(1);
    });
  });

  describe('accept', () => {
    it('moves the target’s booking of exactly that range to the proposer', async () => {
      const { proposer, target } = await pair();
      const slot = nextSlot();
      const booking = await createBooking(t, target, slot.startsAt, slot.endsAt);
      const proposal = (await propose(proposer, target, slot)).json();
      const response = await decide(target, proposal.id, 'accept');
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ ...proposal, status: 'accepted' });
      expect((await bookingsOf(proposer)).map((b) => [b.id, b.agentId])).toEqual([[booking.id, proposer.id]]);
      expect(await bookingsOf(target)).toEqual([]);
      expect(await t.query('select agent_id from booking_slots where booking_id = $1', [booking.id])).toEqual([{ agent_id: proposer.id }]);
    });

    it('creates a booking for the proposer when the target holds no such booking', async () => {
      const { proposer, target } = await pair();
      const slot = nextSlot();
      const proposal = (await propose(proposer, target, slot)).json();
      expect((await decide(target, proposal.id, 'accept')).statusCode).toBe(200);
      expect((await bookingsOf(proposer)).map((b) => b.startsAt)).toEqual([slot.startsAt]);
    });

    it('answers slot_taken when the proposer is busy, and the proposal stays pending', async () => {
      const { proposer, target } = await pair();
      const slot = nextSlot();
      const held = await createBooking(t, target, slot.startsAt, slot.endsAt);
      await createBooking(t, proposer, slot.startsAt, new Date(Date.parse(slot.startsAt) + 1_800_000).toISOString());
      const proposal = (await propose(proposer, target, slot)).json();
      const response = await decide(target, proposal.id, 'accept');
      expect(response.statusCode).toBe(409);
      expect(response.json().error).toBe('slot_taken');
      expect(await t.query('select status from proposals where id = $1', [proposal.id])).toEqual([{ status: 'pending' }]);
      expect((await bookingsOf(target)).map((b) => b.id)).toEqual([held.id]);
    });

    it('is for the target only: 403 for the proposer and for strangers, 404 for no proposal', async () => {
      const { proposer, target } = await pair();
      const stranger = await createAgent(t, root);
      const proposal = (await propose(proposer, target)).json();
      expect((await decide(proposer, proposal.id, 'accept')).statusCode).toBe(403);
      expect((await decide(stranger, proposal.id, 'accept')).statusCode).toBe(403);
      expect((await decide(target, '00000000-0000-4000-8000-000000000000', 'accept')).statusCode).toBe(404);
      expect((await decide(target, 'nope', 'accept')).statusCode).toBe(404);
    });

    it('answers proposal_not_pending once terminal', async () => {
      const { proposer, target } = await pair();
      const proposal = (await propose(proposer, target)).json();
      await decide(target, proposal.id, 'accept');
      for (const decision of ['accept', 'reject', 'decline']) {
        const response = await decide(target, proposal.id, decision);
        expect(response.statusCode).toBe(409);
        expect(response.json().error).toBe('proposal_not_pending');
      }
      expect((await decide(proposer, proposal.id, 'withdraw')).json().error).toBe('proposal_not_pending');
    });

    it('lets exactly one of 10 simultaneous accepts succeed', async () => {
      const { proposer, target } = await pair();
      const slot = nextSlot();
      await createBooking(t, target, slot.startsAt, slot.endsAt);
      const proposal = (await propose(proposer, target, slot)).json();
      const responses = await Promise.all(Array.from({ length: 10 }, () => decide(target, proposal.id, 'accept')));
      expect(responses.filter((r) => r.statusCode === 200)).toHaveLength(1);
      const losers = responses.filter((r) => r.statusCode !== 200);
      expect(losers.map((r) => [r.statusCode, r.json().error])).toEqual(Array(9).fill([409, 'proposal_not_pending']));
      expect(await bookingsOf(proposer)).toHaveLength(1);
    });

    it('leaves a consistent state when accept and withdraw race', async () => {
      for (let round = 0; round < 8; round++) {
        const { proposer, target } = await pair();
        const slot = nextSlot();
        const held = await createBooking(t, target, slot.startsAt, slot.endsAt);
        const proposal = (await propose(proposer, target, slot)).json();
        const [accept, withdraw] = await Promise.all([decide(target, proposal.id, 'accept'), decide(proposer, proposal.id, 'withdraw')]);
        expect([accept.statusCode, withdraw.statusCode].sort()).toEqual([200, 409]);
        const [{ status }] = await t.query<{ status: string }>('select status from proposals where id = $1', [proposal.id]) as [{ status: string }];
        const [{ agent_id: owner }] = await t.query<{ agent_id: string }>('select agent_id from bookings where id = $1', [held.id]) as [{ agent_id: string }];
        if (accept.statusCode === 200) {
          expect([status, owner]).toEqual(['accepted', proposer.id]);
        } else {
          expect([status, owner]).toEqual(['withdrawn', target.id]);
        }
      }
    });
  });

  describe('reject, decline, withdraw', () => {
    it('reject by the target leaves the proposal pending; others get 403', async () => {
      const { proposer, target } = await pair();
      const proposal = (await propose(proposer, target)).json();
      const response = await decide(target, proposal.id, 'reject', true);
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual(proposal);
      expect((await decide(proposer, proposal.id, 'reject')).statusCode).toBe(403);
    });

    it('decline is the target’s and withdraw the proposer’s terminal answer', async () => {
      const { proposer, target } = await pair();
      const declined = (await propose(proposer, target)).json();
      expect((await decide(proposer, declined.id, 'decline')).statusCode).toBe(403);
      expect((await decide(target, declined.id, 'decline')).json().status).toBe('declined');
      const withdrawn = (await propose(proposer, target)).json();
      expect((await decide(target, withdrawn.id, 'withdraw')).statusCode).toBe(403);
      expect((await decide(proposer, withdrawn.id, 'withdraw')).json().status).toBe('withdrawn');
      expect((await decide(target, withdrawn.id, 'accept')).statusCode).toBe(409);
    });
  });

  describe('GET /api/proposals', () => {
    it('lists incoming and outgoing proposals by status', async () => {
      const { proposer, target } = await pair();
      const pending = (await propose(proposer, target)).json();
      const accepted = (await propose(proposer, target)).json();
      await decide(target, accepted.id, 'accept');
      const list = async (agent: AgentWithToken, query: string) =>
        (await t.rest({ method: 'GET', url: `/api/proposals${query}`, headers: bearer(agent.token) })).json().items.map((p: { id: string }) => p.id);
      expect(await list(target, '?role=incoming')).toEqual([accepted.id, pending.id]);
      expect(await list(target, '?role=outgoing')).toEqual([]);
      expect(await list(proposer, '?role=outgoing&status=pending')).toEqual([pending.id]);
      expect(await list(proposer, '')).toEqual([accepted.id, pending.id]);
      expect((await t.rest({ method: 'GET', url: '/api/proposals?role=sideways', headers: bearer(target.token) })).statusCode).toBe(400);
    });
  });

  describe('GraphQL', () => {
    it('runs the same rules, with proposer and target batched', async () => {
      const proposer = await createAgent(t, root, 'gql-proposer');
      const target = await createAgent(t, root, 'gql-target');
      const slot = nextSlot();
      await createBooking(t, target, slot.startsAt, slot.endsAt);
      const created = await t.gql(CreateProposalDocument, { input: { targetAgentId: target.id, ...slot } }, bearer(proposer.token));
      const id = created.data!.createProposal.id;
      const byProposer = await t.gql(AcceptProposalDocument, { id }, bearer(proposer.token));
      expect(byProposer.errors?.[0]?.extensions).toEqual({ code: 'forbidden' });
      const accepted = await t.gql(AcceptProposalDocument, { id }, bearer(target.token));
      expect(accepted.data!.acceptProposal.status).toBe('accepted');
      expect(accepted.data!.acceptProposal.bookingId).toEqual(expect.any(String));
      const again = await t.gql(AcceptProposalDocument, { id }, bearer(target.token));
      expect(again.errors?.[0]?.extensions).toEqual({ code: 'proposal_not_pending' });

      t.sql.reset();
      const listed = await t.gql(ProposalsDocument, { role: 'incoming' }, bearer(target.token));
      expect(listed.data!.proposals.map((p) => [p.proposer.name, p.target.name, p.status])).toEqual([['gql-proposer', 'gql-target', 'accepted']]);
      // the list and one batched load of the other agent (the credential is cached, the caller primed)
      expect(t.sql.statements).toHaveLength(2);
    });

    it('answers a PATCH with a JSON content type and no body', async () => {
      const { proposer, target } = await pair();
      const proposal = (await propose(proposer, target)).json();
      expect((await decide(target, proposal.id, 'accept', true)).statusCode).toBe(200);
    });
  });
});
