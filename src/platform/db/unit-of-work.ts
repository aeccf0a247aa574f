import { AsyncLocalStorage } from 'node:async_hooks';
import type { EntityManager } from '@mikro-orm/core';

/**
 * One unit of work (an EntityManager fork) per request, GraphQL operation or job, made when the ORM
 * is first used in it.
 *
 * MikroORM's `RequestContext` forks when the scope opens. The hot paths answer from named statements
 * and never touch the ORM, and that fork was 2 % of the gateway's CPU in bench S2. Here a scope is an
 * empty map until the ORM asks for its entity manager: `createOrm` gives MikroORM a `context`
 * function that forks the root on first use and keeps the fork for the rest of the scope. Keyed by
 * the root, so several ORMs in one process (tests) never share a fork.
 */
const scopes = new AsyncLocalStorage<Map<EntityManager, EntityManager>>();

/** Runs `operation` in a unit of work of its own. */
export function inUnitOfWork<T>(operation: () => T): T {
  return scopes.run(new Map(), operation);
}

/** The current scope's fork of `root`, made now if the scope has none yet; undefined outside a scope. */
export function currentUnitOfWork<Em extends EntityManager>(root: Em): Em | undefined {
  const scope = scopes.getStore();
  if (!scope) return undefined;
  let fork = scope.get(root);
  if (fork) return fork as Em;
  // A fork asks for the context while it is being built (MikroORM's RequestContext forks before its
  // scope opens, so the answer there is "none"): the same answer here, until it is built.
  if (building.has(root)) return undefined;
  building.add(root);
  try {
    fork = root.fork({ useContext: true, disableContextResolution: true });
  } finally {
    building.delete(root);
  }
  scope.set(root, fork);
  return fork as Em;
}

const building = new Set<EntityManager>();
