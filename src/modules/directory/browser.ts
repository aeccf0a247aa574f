/**
 * The directory module's browser-safe public surface: what the /browse page may import. Only pure code
 * belongs here (no Node, MikroORM or Fastify), which is why it is not index.ts; the lint rules let
 * src/web import this file and nothing else from a module.
 */
export { AUTH_METHODS, PRICING_MODELS, checkToolSubmission } from './tool-rules.js';
