import type { FastifyInstance } from 'fastify';
import { parseCredential, type PresentedCredential } from '../auth/credentials.js';


declare module 'fastify' {
  interface FastifyRequest {
    /** The credential headers as presented; services decide what they are worth. */
    credential: PresentedCredential;
  }
}

export function installCredentialParsing(app: FastifyInstance): void {
  // A null placeholder keeps the request object's shape stable; the hook sets the real value.
  app.decorateRequest('credential', null as never);
  app.addHook('onRequest', async (request) => {
    request.credential = parseCredential(request.headers.authorization, request.headers['x-api-key']);
  });
}
