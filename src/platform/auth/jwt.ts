import { randomBytes } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import type { Clock } from '../clock.js';

export interface IssuedToken {
  token: string;
  expiresAt: Date;
}

export interface VerifiedToken {
  subject: string;
  claims: Record<string, unknown>;
}

export class InvalidTokenError extends Error {
  constructor(readonly reason: 'expired' | 'invalid') {
    super(reason === 'expired' ? 'the token has expired' : 'the token is not valid');
  }
}

/** HS256 JSON Web Tokens (jose) with one secret and one lifetime. */
export class JwtIssuer {
  private readonly key: Uint8Array;

  constructor(
    secret: string,
    private readonly ttlSeconds: number,
    private readonly clock: Clock,
    private readonly issuer = 'agent-gateway',
  ) {
    this.key = new TextEncoder().encode(secret);
  }

  async issue(subject: string, claims: Record<string, unknown> = {}): Promise<IssuedToken> {
    const issuedAt = Math.floor(this.clock.now().getTime() / 1000);
    const expiresAt = issuedAt + this.ttlSeconds;
    const token = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(subject)
      .setIssuer(this.issuer)
      .setIssuedAt(issuedAt)
      .setExpirationTime(expiresAt)
      .sign(this.key);
    return { token, expiresAt: new Date(expiresAt * 1000) };
  }

  async verify(token: string): Promise<VerifiedToken> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        issuer: this.issuer,
        algorithms: ['HS256'],
        currentDate: this.clock.now(),
      });
      if (!payload.sub) throw new InvalidTokenError('invalid');
      return { subject: payload.sub, claims: payload };
    } catch (error) {
      if (error instanceof InvalidTokenError) throw error;
      throw new InvalidTokenError(error instanceof joseErrors.JWTExpired ? 'expired' : 'invalid');
    }
  }
}

/**
 * The signing secret: JWT_SECRET when configured, otherwise one generated on first start and kept in
 * the `settings` table (the first process to insert wins; everyone reads the stored value).
 */
export async function resolveJwtSecret(
  configured: string | undefined,
  execute: (sql: string, params: unknown[]) => Promise<{ value: string }[]>,
): Promise<string> {
  if (configured) return configured;
  await execute(`insert into settings (key, value) values ('jwt_secret', ?) on conflict (key) do nothing`, [randomBytes(48).toString('base64url')]);
  const [row] = await execute(`select value from settings where key = 'jwt_secret'`, []);
  if (!row) throw new Error('the JWT secret could not be stored');
  return row.value;
}
