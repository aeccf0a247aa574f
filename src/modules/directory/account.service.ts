import type { EntityManager } from '@mikro-orm/postgresql';
import { notThePrincipal, type Actor, type TokenResolver } from '../../platform/auth/actor.js';
import { generateToken, sha256Hex } from '../../platform/auth/credentials.js';
import { InvalidTokenError, type JwtIssuer } from '../../platform/auth/jwt.js';
import type { Clock } from '../../platform/clock.js';
import type { Statements } from '../../platform/db/statements.js';
import { REDEEM_MAGIC_LINK } from './sql/directory.sql.js';
import { AppError } from '../../platform/errors.js';
import { tighterBudget, type BudgetState, type RateLimitPolicy, type RateLimits } from '../../platform/http/rate-limit.js';
import type { Mailer } from '../../platform/mail/mailer.js';
import { MagicLinkToken } from './entities/magic-link-token.entity.js';
import { ACCOUNT_LIMITS } from './limits.js';
import { isEmail } from '../../platform/formats.js';

export const MAGIC_LINK_TTL_MINUTES = 15;

export const MAGIC_LINK_TTL_MS = MAGIC_LINK_TTL_MINUTES * 60 * 1000;
/** What a person is told about a link, in the mail and in the API's answer. */
export const MAGIC_LINK_LIFETIME = `The link works once and expires in ${MAGIC_LINK_TTL_MINUTES} minutes.`;

/** Sign-in has its own budgets, apart from the directory's: per client address, and per e-mail address asked for. */
const SIGN_IN_BY_IP: RateLimitPolicy = { name: 'sign-in-ip', points: 10, durationSeconds: 60 };
const SIGN_IN_BY_ADDRESS: RateLimitPolicy = { name: 'sign-in-address', points: 10, durationSeconds: 60 };
export const SESSION_TTL_SECONDS = 7 * 24 * 60 * 60;

/** A signed-in directory user, as a session token names them. */
export interface Account {
  readonly id: string;
  readonly email: string;
}

declare module '../../platform/auth/actor.js' {
  interface Principals {
    /** A directory user, by a session token from /api/auth/verify. */
    account: { readonly account: Account };
  }
}

const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]+$/;

/** The signed-in user an operation acts for; 401 `unauthorized` for anyone else, saying why. */
export function accountOf(actor: Actor): Account {
  if (actor.kind === 'account') return actor.account;
  throw notThePrincipal(
    actor,
    'sign in first: send Authorization: Bearer <token> from /api/auth/verify',
    'this operation needs a directory session: send the token from /api/auth/verify, not an agent or admin token',
  );
}

/** The signed-in user for reads, where anyone else simply reads anonymously. */
export function viewerOf(actor: Actor): Account | undefined {
  return actor.kind === 'account' ? actor.account : undefined;
}


export interface SignedIn {
  token: string;
  expiresAt: Date;
  user: { id: string; email: string };
}

/** Magic-link sign-in and the session JWTs that follow it. */
export class AccountService {
  constructor(
    private readonly em: EntityManager,
    private readonly statements: Statements,
    private readonly clock: Clock,
    private readonly jwt: JwtIssuer,
    private readonly mailer: Mailer,
    private readonly publicUrl: string,
    private readonly rateLimits: RateLimits,
  ) {}

  /**
   * Normalises and checks an address: JSON Schema's `format: email`, as the REST schema states it (a
   * dotted domain; no spaces, commas, brackets or quotes); deliverability is the mail server's call.
   * 400 naming `email` when it cannot be one.
   */
  checkEmail(raw: string): string {
    const email = raw.trim().toLowerCase();
    if (email.length > ACCOUNT_LIMITS.emailMaxLength || !isEmail(email)) throw AppError.validation({ email: `must be ${ACCOUNT_LIMITS.emailDescription}` });
    return email;
  }

  /**
   * Sends a one-time link valid MAGIC_LINK_TTL_MINUTES. The answer is the same whether or not the address has an
   * account, so the route cannot be used to find out who has one.
   */
  async requestMagicLink(address: string, rawEmail: string): Promise<BudgetState> {
    const byIp = await this.rateLimits.consumeByAddress(SIGN_IN_BY_IP, address);
    const email = this.checkEmail(rawEmail);
    const budget = tighterBudget(byIp, await this.rateLimits.consume(SIGN_IN_BY_ADDRESS, email));
    const token = generateToken('');
    const now = this.clock.now();
    this.em.create(MagicLinkToken, { tokenHash: sha256Hex(token), email, expiresAt: new Date(now.getTime() + MAGIC_LINK_TTL_MS), createdAt: now });
    await this.em.flush();
    const link = `${this.publicUrl}/browse?token=${encodeURIComponent(token)}`;
    await this.mailer.send({
      to: email,
      subject: 'Your sign-in link',
      text: `Sign in to the tool directory:\n\n${link}\n\n${MAGIC_LINK_LIFETIME} If you did not ask for it, ignore this e-mail.\n`,
      html: `<p>Sign in to the tool directory:</p><p><a href="${link}">Sign in</a></p><p>${MAGIC_LINK_LIFETIME} If you did not ask for it, ignore this e-mail.</p>`,
    });
    return budget;
  }

  /** Redeems a link once (a conditional update), creating the account on first sign-in. */
  async redeem(address: string, token: string): Promise<{ signedIn: SignedIn; budget: BudgetState }> {
    const budget = await this.rateLimits.consumeByAddress(SIGN_IN_BY_IP, address);
    const now = this.clock.now();
    const user = await this.statements.one(REDEEM_MAGIC_LINK, [sha256Hex(token), now]);
    if (!user) throw new AppError('unauthorized', 'the sign-in link is unknown, already used or expired: ask for a new one');
    const session = await this.jwt.issue(user.id, { email: user.email });
    return { signedIn: { token: session.token, expiresAt: session.expiresAt, user }, budget };
  }

  /**
   * Session tokens (JWTs) as callers. The signature vouches for the account: no database read,
   * so rate-limit keys and optional reads cost nothing extra.
   */
  readonly tokens: TokenResolver = {
    claims: (token) => JWT_SHAPE.test(token),
    resolve: async (token) => {
      try {
        const { subject, claims } = await this.jwt.verify(token);
        return { kind: 'account', account: { id: subject, email: typeof claims.email === 'string' ? claims.email : '' } };
      } catch (error) {
        if (!(error instanceof InvalidTokenError)) throw error;
        throw new AppError('unauthorized', error.reason === 'expired' ? 'the token has expired: sign in again' : 'the token is not valid: sign in again');
      }
    },
  };
}
