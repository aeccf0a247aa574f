/** How a newly created agent is presented: REST sends it, GraphQL shares its next-step text (a module view, not an adapter's). */
import type { CreatedAgent } from './agent.service.js';

/** The literal header forms clients copy; placeholders, the same for every agent. */
export const NEXT_STEP = {
  save_public_token: true,
  authorization: 'Authorization: Bearer <public_token>',
  x_api_key: 'X-API-Key: <public_token>',
  message:
    'Save public_token now: it is shown only this once and cannot be recovered. Send it on every request with one of the two headers above (not both).',
} as const;

/** Seed 000 `Agent`. */
export function presentCreatedAgent({ agent, publicToken }: CreatedAgent) {
  return {
    id: agent.id,
    public_token: publicToken,
    created_at: agent.createdAt.toISOString(),
    next_step: NEXT_STEP,
  };
}
