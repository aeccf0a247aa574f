import type { TestApp } from '../harness.js';
import type { Mailbox } from './mailbox.js';

let sequence = 0;

export interface SignedInUser {
  id: string;
  email: string;
  token: string;
}

/** Signs a new user in through the public routes: magic link, then verify. */
export async function signIn(t: TestApp, mailbox: Mailbox, email?: string): Promise<SignedInUser> {
  const n = ++sequence;
  email ??= `user-${n}-${Date.now()}@example.com`;
  // Each sign-in from its own address: the sign-in routes allow 10 a minute per address.
  const remoteAddress = `10.${Math.floor(n / 250) % 250}.${n % 250}.7`;
  const requested = await t.rest({ method: 'POST', url: '/api/auth/magic-link', payload: { email }, remoteAddress });
  if (requested.statusCode !== 200) throw new Error(`magic link failed: ${requested.statusCode} ${requested.body}`);
  const verified = await t.rest({ method: 'POST', url: '/api/auth/verify', payload: { token: mailbox.tokenFor(email) }, remoteAddress });
  if (verified.statusCode !== 200) throw new Error(`verify failed: ${verified.statusCode} ${verified.body}`);
  const body = verified.json();
  return { id: body.user.id, email: body.user.email, token: body.token };
}

export interface ToolBody {
  name: string;
  url: string;
  description: string;
  category_id: number;
  [key: string]: unknown;
}

let toolSequence = 0;

export function toolBody(overrides: Partial<ToolBody> = {}): ToolBody {
  const n = ++toolSequence;
  return { name: `Tool ${n}`, url: `https://tool-${n}-${Date.now()}.example.com`, description: `Does thing ${n}.`, category_id: 1, ...overrides };
}

export async function submitTool(t: TestApp, user: SignedInUser, overrides: Partial<ToolBody> = {}, headers: Record<string, string> = {}) {
  const response = await t.rest({
    method: 'POST',
    url: '/api/tools',
    headers: { authorization: `Bearer ${user.token}`, ...headers },
    payload: toolBody(overrides),
  });
  if (response.statusCode !== 201) throw new Error(`submit failed: ${response.statusCode} ${response.body}`);
  return response.json().tool as { id: number; name: string; url: string; vote_count: number; slug: string };
}
