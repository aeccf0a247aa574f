/**
 * What one GraphQL client may ask of the server, over HTTP, WebSocket and SSE alike. docs/reliability.md
 * ("Reliability and security") lists each bound with the test that holds it.
 */
export const GRAPHQL_LIMITS = {
  /** Lexical tokens in one document (the largest operations file of the web app and tests has 280, the full introspection query 184). */
  maxTokens: 2_000,
  /** Nesting depth of a selection (introspection excepted). */
  maxDepth: 10,
  /** Aliases in one document: each alias runs its field again. */
  maxAliases: 15,
  /** Directives in one document (`@skip`, `@include`): each is read again wherever its selection is. */
  maxDirectives: 50,
  /** Characters of one name (field, alias, argument, variable, fragment, operation): the answer repeats aliases and unknown names. */
  maxNameLength: 128,
  /** Errors in one answer (validation stops at this many; the rest of a longer list is summed up in one more). */
  maxErrorsPerAnswer: 20,
  /** graphql-armor's cost: every field and every level of nesting costs. */
  maxCost: 5_000,
  /** One WebSocket message; above it the socket is closed with 1009 (message too big). */
  maxMessageBytes: 64 * 1024,
  /** Open WebSocket connections from one client address; above it the upgrade is answered 429. */
  maxSocketsPerAddress: 500,
  /** Open WebSocket connections presenting one credential; above it the socket is closed with 1008. */
  maxSocketsPerCredential: 100,
  /** Operations running at once on one socket; above it the new operation gets a `limit_exceeded` error. */
  maxOperationsPerSocket: 100,
  /** Bytes waiting in one socket that its client has not taken (beyond the kernel's buffers); a live subscription pushed past it ends with `subscriber_lagging`. */
  maxUnsentBytesPerSocket: 1024 * 1024,
  /** Live events pushed to one subscription while their execution still runs (a resolver that hangs); past it `subscriber_lagging`. */
  maxPushesAwaitingExecution: 1_000,
  /** How long a new socket may take to send `connection_init` before it is closed with 4408. */
  connectionInitWaitMs: 3_000,
  /** Operations kept compiled by graphql-jit (least recently used go first); each is compiled on its second request. */
  maxCompiledOperations: 1_000,
} as const;

/** Counts open connections per key (address, credential) and refuses one over the bound. */
export class ConnectionCounter {
  private readonly open = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** Takes a place for `key`; false (and nothing taken) when it has `max` already. */
  acquire(key: string): boolean {
    const count = this.open.get(key) ?? 0;
    if (count >= this.max) return false;
    this.open.set(key, count + 1);
    return true;
  }

  release(key: string): void {
    const count = (this.open.get(key) ?? 1) - 1;
    if (count > 0) this.open.set(key, count);
    else this.open.delete(key);
  }
}
