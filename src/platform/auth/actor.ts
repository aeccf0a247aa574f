import { timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors.js';
import type { PresentedCredential } from './credentials.js';

/**
 * The principals modules add, by kind. A module declares its own with declaration merging, so the
 * platform names none of them:
 *
 *     declare module '../../platform/auth/actor.js' {
 *       interface Principals { agent: { readonly agent: AgentRecord } }
 *     }
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled in by the modules
export interface Principals {}

/** Why a caller counts as anonymous: nothing was sent, or what was sent did not count. */
export type Anonymity =
  | { readonly credential: 'none' }
  /** Sent but refused (malformed, unknown, forged, expired): the message says which, for a 401. */
  | { readonly credential: 'refused'; readonly refusal: string };

/**
 * Who is calling: resolved once per HTTP request, GraphQL operation, WebSocket connection and MCP
 * request, then passed first to every service method. Services decide what each kind may do.
 */
export type Actor =
  | ({ readonly kind: 'anonymous' } & Anonymity)
  /** The operator, by ADMIN_TOKEN. */
  | { readonly kind: 'admin' }
  | { [Kind in keyof Principals]: { readonly kind: Kind } & Principals[Kind] }[keyof Principals];

export const ANONYMOUS: Actor = { kind: 'anonymous', credential: 'none' };

/** How one kind of token becomes a principal; `resolve` throws `unauthorized` for one it refuses. */
export interface TokenResolver {
  /** Whether the token has this kind's shape (a prefix, three JWT segments); no lookup. */
  claims(token: string): boolean;
  resolve(token: string): Promise<Actor>;
}

/** Every token this gateway issues matches one resolver; anything else is refused without a lookup. */
const UNRECOGNISED =
  'invalid credential: the token is not recognised; send the public_token returned when the agent was created, or a session token from /api/auth/verify';

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Turns a presented credential into an Actor. A credential that does not count makes the caller
 * anonymous with the reason kept: operations that need a principal answer 401 with it, optional
 * reads simply serve the anonymous caller. Only a failure to look the token up (the database)
 * escapes as an error.
 */
export class ActorResolver {
  private readonly resolvers: TokenResolver[] = [];

  constructor(private readonly adminToken: string | undefined) {}

  /** Modules add their kinds of token as they are built; requests only arrive afterwards. */
  accept(resolver: TokenResolver): void {
    this.resolvers.push(resolver);
  }

  async resolve(credential: PresentedCredential): Promise<Actor> {
    if (credential.kind === 'none') return ANONYMOUS;
    if (credential.kind === 'malformed') return refused(`unparseable credential: ${credential.reason}`);
    const { token } = credential;
    if (this.adminToken !== undefined && sameSecret(token, this.adminToken)) return { kind: 'admin' };
    const resolver = this.resolvers.find((candidate) => candidate.claims(token));
    if (!resolver) return refused(UNRECOGNISED);
    try {
      return await resolver.resolve(token);
    } catch (error) {
      if (error instanceof AppError && error.code === 'unauthorized') return refused(error.message);
      throw error;
    }
  }

  /**
   * Memoises `resolve` for one unit (a request, an operation, a connection). A lookup that failed (the
   * database did not answer) is not kept: a WebSocket connection lives for hours, and its next
   * operation looks again instead of failing like the first.
   */
  once(credential: PresentedCredential): () => Promise<Actor> {
    let actor: Promise<Actor> | undefined;
    return () => {
      if (actor) return actor;
      const resolving = this.resolve(credential);
      actor = resolving;
      resolving.catch(() => {
        if (actor === resolving) actor = undefined;
      });
      return resolving;
    };
  }
}

function refused(refusal: string): Actor {
  return { kind: 'anonymous', credential: 'refused', refusal };
}

/**
 * The 401 for an actor that is not the principal an operation needs. `missing` is what to tell a
 * caller who sent nothing; a refused credential keeps its own reason.
 */
export function notThePrincipal(actor: Actor, missing: string, wrongKind: string): AppError {
  if (actor.kind === 'anonymous') return new AppError('unauthorized', actor.credential === 'refused' ? actor.refusal : missing);
  return new AppError('unauthorized', wrongKind);
}
