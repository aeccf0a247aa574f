import { createServer } from 'node:net';
import { SettingError } from '../setting-error.js';

/** What a failed `listen` means for the operator, naming PORT or HOST; undefined for anything else. */
export function listenFailure(error: unknown, port: number, host: string): SettingError | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  switch (code) {
    case 'EADDRINUSE':
      return new SettingError('PORT', `Cannot start: PORT ${port} on ${host} is already in use by another process; stop it or set PORT to a free port (0: any)`);
    case 'EACCES':
      return new SettingError('PORT', `Cannot start: PORT ${port} on ${host} needs privileges this process lacks; set PORT to 1024 or above`);
    case 'EADDRNOTAVAIL':
      return new SettingError('HOST', `Cannot start: HOST ${host} is not an address of this machine; set HOST to one of its addresses, or 0.0.0.0 for all`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new SettingError('HOST', `Cannot start: HOST ${host} does not resolve to an address; set HOST to an address of this machine, or 0.0.0.0 for all`);
    default:
      return undefined;
  }
}

/**
 * Fails at once, before the database starts, when the server could not listen at `port` on `host`:
 * binds and lets go. A port taken in between is still reported by the real `listen` (listenFailure).
 */
export async function assertCanListen(port: number, host: string): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error) => reject(listenFailure(error, port, host) ?? error));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}
