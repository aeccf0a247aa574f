export declare function findPgBouncer(): Promise<string | undefined>;

export declare const PGBOUNCER_MISSING: string;

export interface PgBouncer {
  readonly port: number;
  /** The pooler's URL for `database`, with the server URL's user and password. */
  urlFor(database: string): string;
  /** What PgBouncer wrote so far. */
  log(): string;
  stop(): Promise<void>;
}

export declare function startPgBouncer(options: {
  serverUrl: string;
  poolSize?: number;
  poolMode?: 'transaction' | 'session';
  maxClients?: number;
}): Promise<PgBouncer>;
