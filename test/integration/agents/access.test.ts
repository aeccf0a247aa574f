import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ACCESS, changeFeedRuleSql, freeBusyRuleSql, FREE_BUSY_VISIBILITIES, mayReadChangeFeed, maySeeFreeBusy, maySeeSettings, relationOf, requireOwner } from '../../../src/modules/agents/index.js';
import { PROPOSAL_ACCESS, requireParty } from '../../../src/modules/proposals/access.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { startTestApp, type TestApp } from '../../harness.js';

/**
 * The access table (agents/access.ts) decides in TypeScript for the services and, written into SQL,
 * inside statements (availability's visibility): both must answer alike for every relation and choice.
 */
describe('one access decision', () => {
  let t: TestApp;
  // root ─┬─ parent ── child
  //       └─ stranger
  const family: Record<'root' | 'parent' | 'child' | 'stranger', AgentWithToken & { parentId: string | null }> = {} as never;

  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
    const root = await bootstrapAgent(t);
    const parent = await createAgent(t, root);
    const child = await createAgent(t, parent);
    const stranger = await createAgent(t, root);
    Object.assign(family, {
      root: { ...root, parentId: null },
      parent: { ...parent, parentId: root.id },
      child: { ...child, parentId: parent.id },
      stranger: { ...stranger, parentId: root.id },
    });
  });
  afterAll(() => t?.close());

  const sqlSaysMaySee = async (callerId: string, agentId: string, visibility: string) => {
    const rule = freeBusyRuleSql('$1::uuid', '(select c.parent_id from agents c where c.id = $1::uuid)', 'a');
    const [row] = await t.query<{ allowed: boolean }>(
      `select ${rule} as allowed from (select a.id, a.parent_id, $3::varchar as free_busy_visibility from agents a where a.id = $2) a`,
      [callerId, agentId, visibility],
    );
    return row!.allowed;
  };

  it('the free/busy rule in SQL answers as the services do, for every relation and visibility', async () => {
    const pairs: [keyof typeof family, keyof typeof family][] = [
      ['parent', 'parent'], // self
      ['parent', 'child'], // the caller is the subject's parent
      ['child', 'parent'], // the caller is the subject's child
      ['parent', 'stranger'], // siblings: other
      ['child', 'root'], // grandparent: other
      ['root', 'child'], // grandchild: other
    ];
    const seen = new Set<string>();
    for (const visibility of FREE_BUSY_VISIBILITIES) {
      for (const [callerName, subjectName] of pairs) {
        const caller = family[callerName];
        const subject = { ...family[subjectName], freeBusyVisibility: visibility };
        const relation = relationOf(caller, subject);
        seen.add(relation);
        const expected = (ACCESS.freeBusy[visibility] as readonly string[]).includes(relation);
        expect({ visibility, relation, ts: maySeeFreeBusy(caller, subject) }).toEqual({ visibility, relation, ts: expected });
        expect({ visibility, relation, sql: await sqlSaysMaySee(caller.id, subject.id, visibility) }).toEqual({ visibility, relation, sql: expected });
      }
    }
    expect([...seen].sort()).toEqual(['child', 'other', 'parent', 'self']);
  });

  it('the change-feed rule in SQL (the members of a family feed) answers as the services do, for every relation', async () => {
    const rule = changeFeedRuleSql('$1::uuid', '(select c.parent_id from agents c where c.id = $1::uuid)', 'a');
    const seen = new Set<string>();
    for (const caller of Object.values(family)) {
      for (const subject of Object.values(family)) {
        const relation = relationOf(caller, subject);
        seen.add(relation);
        const expected = (ACCESS.changeFeed as readonly string[]).includes(relation);
        const [row] = await t.query<{ allowed: boolean }>(`select ${rule} as allowed from agents a where a.id = $2`, [caller.id, subject.id]);
        expect({ relation, ts: mayReadChangeFeed(caller, subject), sql: row!.allowed }).toEqual({ relation, ts: expected, sql: expected });
      }
    }
    expect([...seen].sort()).toEqual(['child', 'other', 'parent', 'self']);
  });

  it('settings are the agent’s and its parent’s; an owned row is the owner’s only', () => {
    expect(maySeeSettings(family.parent, family.child)).toBe(true);
    expect(maySeeSettings(family.child, family.child)).toBe(true);
    expect(maySeeSettings(family.child, family.parent)).toBe(false);
    expect(maySeeSettings(family.stranger, family.child)).toBe(false);
    expect(() => requireOwner(family.child, family.child.id, 'booking')).not.toThrow();
    expect(() => requireOwner(family.parent, family.child.id, 'booking')).toThrow('the booking belongs to another agent');
  });

  it('a proposal’s actions are its parties’ by the table, no one else’s', () => {
    const proposal = { proposerId: family.child.id, targetId: family.stranger.id };
    for (const [action, parties] of Object.entries(PROPOSAL_ACCESS) as [keyof typeof PROPOSAL_ACCESS, readonly string[]][]) {
      for (const [party, id] of [['proposer', proposal.proposerId], ['target', proposal.targetId], ['other', family.root.id]] as const) {
        const check = () => requireParty(id, proposal, action);
        if (parties.includes(party)) expect(check).not.toThrow();
        else expect(check).toThrow(expect.objectContaining({ code: 'forbidden' }));
      }
    }
  });
});
