import { describe, expect, it } from '@jest/globals';
import { ActorResolver, notThePrincipal, type Actor, type TokenResolver } from '../../src/platform/auth/actor.js';
import { AppError } from '../../src/platform/errors.js';

/** A token kind that answers from a table and counts its lookups. */
function countingResolver(prefix: string, known: Record<string, Actor>): TokenResolver & { lookups: number } {
  const resolver = {
    lookups: 0,
    claims: (token: string) => token.startsWith(prefix),
    async resolve(token: string): Promise<Actor> {
      resolver.lookups++;
      if (token === `${prefix}down`) throw new Error('connection refused');
      const actor = known[token];
      if (!actor) throw new AppError('unauthorized', `unknown ${prefix} token`);
      return actor;
    },
  };
  return resolver;
}

const agent = { kind: 'agent', agent: { id: 'a1' } } as unknown as Actor;

function resolverWith(adminToken?: string) {
  const tokens = countingResolver('agt_', { agt_one: agent });
  const actors = new ActorResolver(adminToken);
  actors.accept(tokens);
  return { actors, tokens };
}

describe('ActorResolver', () => {
  it('makes a caller without a credential anonymous, and one with a malformed credential anonymous with the reason', async () => {
    const { actors, tokens } = resolverWith();
    await expect(actors.resolve({ kind: 'none' })).resolves.toEqual({ kind: 'anonymous', credential: 'none' });
    await expect(actors.resolve({ kind: 'malformed', reason: 'both headers' })).resolves.toEqual({
      kind: 'anonymous',
      credential: 'refused',
      refusal: 'unparseable credential: both headers',
    });
    expect(tokens.lookups).toBe(0);
  });

  it('resolves a token through the kind that claims it, and refuses an unclaimed one without any lookup', async () => {
    const { actors, tokens } = resolverWith();
    await expect(actors.resolve({ kind: 'token', token: 'agt_one' })).resolves.toBe(agent);
    const unclaimed = await actors.resolve({ kind: 'token', token: 'xyz' });
    expect(unclaimed).toMatchObject({ kind: 'anonymous', credential: 'refused', refusal: expect.stringMatching(/not recognised/) });
    expect(tokens.lookups).toBe(1);
  });

  it('keeps a refused token as anonymous with its reason, but lets a failed lookup escape', async () => {
    const { actors } = resolverWith();
    await expect(actors.resolve({ kind: 'token', token: 'agt_other' })).resolves.toEqual({ kind: 'anonymous', credential: 'refused', refusal: 'unknown agt_ token' });
    await expect(actors.resolve({ kind: 'token', token: 'agt_down' })).rejects.toThrow('connection refused');
  });

  it('recognises the admin token only when one is configured', async () => {
    await expect(resolverWith('s3cret-admin').actors.resolve({ kind: 'token', token: 's3cret-admin' })).resolves.toEqual({ kind: 'admin' });
    await expect(resolverWith('s3cret-admin').actors.resolve({ kind: 'token', token: 's3cret-admiN' })).resolves.toMatchObject({ kind: 'anonymous' });
    await expect(resolverWith(undefined).actors.resolve({ kind: 'token', token: 's3cret-admin' })).resolves.toMatchObject({ kind: 'anonymous' });
  });

  it('resolves once per unit however often the unit asks', async () => {
    const { actors, tokens } = resolverWith();
    const actor = actors.once({ kind: 'token', token: 'agt_one' });
    const answers = await Promise.all([actor(), actor(), actor(), actor(), actor()]);
    expect(new Set(answers)).toEqual(new Set([agent]));
    expect(tokens.lookups).toBe(1);
  });

  it('looks again after a failed lookup instead of keeping the failure for the rest of the unit', async () => {
    const actors = new ActorResolver(undefined);
    let databaseAnswers = false;
    let lookups = 0;
    actors.accept({
      claims: (token) => token.startsWith('agt_'),
      resolve: async () => {
        lookups++;
        if (!databaseAnswers) throw new AppError('unavailable', 'the database is not answering');
        return agent;
      },
    });
    const connection = actors.once({ kind: 'token', token: 'agt_one' });
    const during = await Promise.allSettled([connection(), connection()]);
    expect(during.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    expect(lookups).toBe(1);
    databaseAnswers = true;
    await expect(connection()).resolves.toBe(agent);
    await expect(connection()).resolves.toBe(agent);
    expect(lookups).toBe(2);
  });
});

describe('notThePrincipal', () => {
  it('tells a caller who sent nothing what to send, keeps a refusal, and names the wrong kind', () => {
    const missing = 'send a token';
    const wrongKind = 'an agent token is needed';
    expect(notThePrincipal({ kind: 'anonymous', credential: 'none' }, missing, wrongKind)).toMatchObject({ code: 'unauthorized', message: missing });
    expect(notThePrincipal({ kind: 'anonymous', credential: 'refused', refusal: 'expired' }, missing, wrongKind)).toMatchObject({ code: 'unauthorized', message: 'expired' });
    expect(notThePrincipal({ kind: 'admin' }, missing, wrongKind)).toMatchObject({ code: 'unauthorized', message: wrongKind });
  });
});
