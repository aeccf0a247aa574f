import baseTeardown from '../global-teardown.mjs';

export default async function globalTeardown() {
  await globalThis.__pgbouncer?.stop();
  await baseTeardown();
}
