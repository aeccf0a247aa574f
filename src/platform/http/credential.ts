import type { FastifyInstance } from 'fastify';
import type { Actor, ActorResolver } from '../auth/actor.js';
import { parseCredential, type PresentedCredential } from '../auth/credentials.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The credential headers as presented. */
    credential: PresentedCredential;
    /** Who is calling: resolved on first use, then the same answer for the rest of the request. */
    actor: () => Promise<Actor>;
  }
}

/** Every request carries its credential and, resolved at most once and only if asked, its actor. */
export function installActorResolution(app: FastifyInstance, actors: ActorResolver): void {
  // Null placeholders keep the request object's shape stable; the hook sets the real values.
  app.decorateRequest('credential', null as never);
  app.decorateRequest('actor', null as never);
  app.addHook('onRequest', async (request) => {
    request.credential = parseCredential(request.headers.authorization, request.headers['x-api-key']);
    request.actor = actors.once(request.credential);
  });
}
