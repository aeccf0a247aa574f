import { createHash, randomBytes } from 'node:crypto';

/**
 * What a caller presented, before anyone looked it up. Parsing is transport-neutral: REST reads
 * headers, graphql-ws reads `connectionParams`, both end here.
 *
 * - `none`: no credential at all.
 * - `token`: exactly one well-formed credential.
 * - `malformed`: something was sent but it cannot be a credential (both headers, a non-Bearer
 *   scheme, an empty value); it never authenticates.
 */
export type PresentedCredential =
  | { readonly kind: 'none' }
  | { readonly kind: 'token'; readonly token: string }
  | { readonly kind: 'malformed'; readonly reason: string };

const NONE: PresentedCredential = { kind: 'none' };

function headerValue(value: unknown): string | undefined {
  if (Array.isArray(value)) return value.length === 1 ? String(value[0]) : value.length ? '\0' : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** Reads `Authorization: Bearer <token>` or `X-API-Key: <token>`; sending both is malformed. */
export function parseCredential(authorization: unknown, apiKey: unknown): PresentedCredential {
  const auth = headerValue(authorization);
  const key = headerValue(apiKey);
  if (auth === undefined && key === undefined) return NONE;
  if (auth !== undefined && key !== undefined) {
    return { kind: 'malformed', reason: 'send either Authorization or X-API-Key, not both' };
  }
  if (key !== undefined) {
    const token = key.trim();
    return token && !token.includes('\0') ? { kind: 'token', token } : { kind: 'malformed', reason: 'X-API-Key is empty' };
  }
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(auth ?? '');
  return match?.[1]
    ? { kind: 'token', token: match[1] }
    : { kind: 'malformed', reason: 'Authorization must be "Bearer <token>"' };
}

/** SHA-256 in hex: how API tokens and one-time tokens are stored and looked up. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** A new secret token: `prefix` + 32 random bytes in base64url (43 characters). */
export function generateToken(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}
