/**
 * What a timed run cost PostgreSQL, per request: commits, WAL, WAL flushes, transactions, and what the
 * busy backends were waiting for. On durable storage a write's time goes to its commits' WAL flushes,
 * so the bench counts them beside the CPU (cpu.ts).
 *
 * Sources, and how exact each is:
 * - WAL bytes: the WAL insert position before and after the run (`pg_current_wal_insert_lsn`), exact.
 * - Commits, WAL records and full-page images: the run's WAL itself, decoded by `pg_walinspect`
 *   (`pg_get_wal_stats` over those two positions), exact. A commit record is written only by a
 *   transaction that has a transaction id, i.e. one that changed something; a NOTIFY gets one too.
 * - WAL flushes (`pg_stat_io`, object `wal`: fsyncs of every process) and transactions
 *   (`pg_stat_database` xact_commit + xact_rollback of the bench's database, read-only ones included):
 *   PostgreSQL's cumulative statistics, which a backend publishes at most once a second while busy and
 *   up to 10 s after it goes idle (PGSTAT_IDLE_INTERVAL). A write run asks for them ("settle"): they are
 *   read after that wait, before and after the run, and the wait's own background work (the gateway's
 *   job-queue polls and heartbeats: read-only transactions, about 7 a second idle, no WAL) is counted
 *   with the run. Other runs report them as null. A write run also starts right after a CHECKPOINT.
 * - Wait events: `pg_stat_activity` sampled every `sampleMs` from a connection of its own, over the
 *   client backends of the bench's database that are not idle; a backend with no wait event is on a
 *   CPU or waiting for one (CPU).
 *
 * The probe's connections use the `postgres` database when they can (so pg_stat_statements of the
 * bench's database never sees them) and run nothing else; their backends' pids are handed to cpu.ts,
 * which leaves them out of PostgreSQL's CPU.
 */
import pg from 'pg';

export interface WaitShare {
  /** `CPU`, `<wait_event_type>:<wait_event>`, or `idle in transaction` (the server waits for the client inside a transaction). */
  event: string;
  /** Of all samples of busy backends. */
  share: number;
}

/** One WAL record type (`Heap/INSERT`, `Transaction/COMMIT`, …), per request. */
export interface WalRecordType {
  type: string;
  count: number;
  bytes: number;
}

export interface DbCost {
  /** Commit records in the run's WAL, per request. */
  commits: number | null;
  walBytes: number;
  walRecords: number | null;
  /** Bytes of full-page images among `walBytes`. */
  fpiBytes: number | null;
  /** WAL fsyncs of all PostgreSQL processes, per request; null unless settled. */
  flushes: number | null;
  /** Transactions of the bench's database (commits and rollbacks, read-only ones included), per request; null unless settled. */
  transactions: number | null;
  /**
   * How long the flushes and transactions were counted: the run and the settling waits around it, in which
   * the servers' background work (the gateway's job queue polls, heartbeats) goes on and is counted too.
   */
  statsWindowMs: number | null;
  /** Record types by bytes, per request (all of them; the report prints the first few). */
  walByType: WalRecordType[];
  /** The most frequent wait events of busy client backends. */
  waits: WaitShare[];
  /** Client backends busy per sample, on average. */
  busyBackends: number;
  samples: number;
}

interface CumulativeStats {
  flushes: number;
  transactions: number;
}

export interface ProbeMark {
  lsn: string;
  stats: CumulativeStats | null;
  /** When `stats` was read. */
  statsAt: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The same server, the `postgres` database (falls back to `url` itself where that one cannot be reached). */
function maintenanceUrl(url: string): string {
  const parsed = new URL(url);
  parsed.pathname = '/postgres';
  return parsed.toString();
}

async function connect(url: string, name: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: name });
  client.on('error', () => undefined); // a lost probe only loses its figures
  await client.connect();
  return client;
}

class WaitSampler {
  private counts = new Map<string, number>();
  private samples = 0;
  private busy = 0;
  private running: Promise<void> | undefined;
  private stopping = false;

  constructor(
    private readonly client: pg.Client,
    private readonly database: string,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    this.counts = new Map();
    this.samples = 0;
    this.busy = 0;
    this.stopping = false;
    if (this.intervalMs <= 0) return;
    this.running = (async () => {
      while (!this.stopping) {
        const started = performance.now();
        const { rows } = await this.client.query<{ event: string }>({
          name: 'bench_wait_sample',
          text: `select case when state like 'idle in transaction%' then 'idle in transaction'
                             when wait_event is null then 'CPU'
                             else wait_event_type || ':' || wait_event end as event
                   from pg_stat_activity
                  where backend_type = 'client backend' and state <> 'idle' and pid <> pg_backend_pid()
                    and datname = $1 and application_name not like 'bench%'`,
          values: [this.database],
        });
        this.samples++;
        this.busy += rows.length;
        for (const { event } of rows) this.counts.set(event, (this.counts.get(event) ?? 0) + 1);
        await sleep(Math.max(0, this.intervalMs - (performance.now() - started)));
      }
    })().catch(() => undefined);
  }

  async stop(): Promise<{ waits: WaitShare[]; busyBackends: number; samples: number }> {
    this.stopping = true;
    await this.running;
    this.running = undefined;
    const total = [...this.counts.values()].reduce((sum, n) => sum + n, 0);
    const waits = [...this.counts]
      .sort((a, b) => b[1] - a[1])
      .map(([event, n]) => ({ event, share: total ? n / total : 0 }));
    return { waits, busyBackends: this.samples ? this.busy / this.samples : 0, samples: this.samples };
  }

  async close(): Promise<void> {
    await this.stop();
    await this.client.end().catch(() => undefined);
  }
}

export class DbProbe {
  /** The last settled reading and when it was taken: a run that starts right after reuses it. */
  private settled: { at: number; stats: CumulativeStats } | undefined;

  private constructor(
    private readonly stats: pg.Client,
    private readonly sampler: WaitSampler,
    private readonly walInspect: boolean,
    private readonly database: string,
    private readonly settleMs: number,
    /** The probe's own backends (left out of PostgreSQL's CPU). */
    readonly backendPids: ReadonlySet<number>,
  ) {}

  /**
   * `settleMs`: how long PostgreSQL's cumulative statistics need to be complete (0: never read them).
   * `sampleMs`: the wait-event sampling interval (0: no sampling).
   */
  static async open(url: string, options: { settleMs: number; sampleMs: number }): Promise<DbProbe> {
    const database = decodeURIComponent(new URL(url).pathname.slice(1));
    let probeUrl = maintenanceUrl(url);
    let stats = await connect(probeUrl, 'bench-probe').catch(() => undefined);
    if (!stats) {
      probeUrl = url;
      stats = await connect(url, 'bench-probe');
    }
    const samplerClient = await connect(probeUrl, 'bench-sampler');
    // Decoding the WAL needs pg_walinspect (contrib, superuser to create): without it, WAL bytes only.
    const walInspect = await stats.query('create extension if not exists pg_walinspect').then(
      () => true,
      () => false,
    );
    const pids = await Promise.all([stats, samplerClient].map(async (client) => (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid));
    return new DbProbe(stats, new WaitSampler(samplerClient, database, options.sampleMs), walInspect, database, options.settleMs, new Set(pids));
  }

  /**
   * Starts measuring. `settle`: a write run. It starts right after a checkpoint, so that each run pays the
   * full-page images of the pages it is first to touch (the first writes to a page after a checkpoint
   * log the whole page; without this, whichever target ran first after the last checkpoint paid them for
   * both), and it also counts WAL flushes and transactions (waiting for the statistics first).
   */
  async begin(settle: boolean): Promise<ProbeMark> {
    let stats: CumulativeStats | null = null;
    if (settle) {
      const settledJustNow = this.settled !== undefined && performance.now() - this.settled.at < 1_000;
      await this.stats.query('checkpoint').catch(() => undefined); // superuser or pg_checkpoint only
      if (this.settleMs > 0) {
        // Since a settled reading taken just now, only the checkpointer worked, and it publishes at once.
        if (!settledJustNow) await sleep(this.settleMs);
        this.settled = { at: performance.now(), stats: await this.cumulative() };
        stats = this.settled.stats;
      }
    }
    const lsn = await this.insertPosition();
    this.sampler.start();
    return { lsn, stats, statsAt: this.settled?.at ?? performance.now() };
  }

  async end(mark: ProbeMark, requests: number): Promise<DbCost> {
    const lsn = await this.insertPosition();
    const sampled = await this.sampler.stop();
    const per = (value: number) => (requests > 0 ? value / requests : 0);
    const walBytes = Number((await this.stats.query<{ bytes: string }>('select pg_wal_lsn_diff($1, $2)::bigint as bytes', [lsn, mark.lsn])).rows[0]!.bytes);
    const byType = this.walInspect ? await this.walRecords(mark.lsn, lsn) : null;
    let flushes: number | null = null;
    let transactions: number | null = null;
    let statsWindowMs: number | null = null;
    if (mark.stats) {
      await sleep(this.settleMs);
      const after = await this.cumulative();
      this.settled = { at: performance.now(), stats: after };
      flushes = per(after.flushes - mark.stats.flushes);
      transactions = per(after.transactions - mark.stats.transactions);
      statsWindowMs = Math.round(this.settled.at - mark.statsAt);
    }
    return {
      commits: byType ? per(byType.filter((row) => row.type.startsWith('Transaction/COMMIT')).reduce((sum, row) => sum + row.count, 0)) : null,
      walBytes: per(walBytes),
      walRecords: byType ? per(byType.reduce((sum, row) => sum + row.count, 0)) : null,
      fpiBytes: byType ? per(byType.reduce((sum, row) => sum + row.fpiBytes, 0)) : null,
      flushes,
      transactions,
      statsWindowMs,
      walByType: (byType ?? []).map((row) => ({ type: row.type, count: per(row.count), bytes: per(row.bytes) })).sort((a, b) => b.bytes - a.bytes),
      ...sampled,
    };
  }

  async close(): Promise<void> {
    await this.sampler.close();
    await this.stats.end().catch(() => undefined);
  }

  private async insertPosition(): Promise<string> {
    return (await this.stats.query<{ lsn: string }>('select pg_current_wal_insert_lsn()::text as lsn')).rows[0]!.lsn;
  }

  private async cumulative(): Promise<CumulativeStats> {
    const { rows } = await this.stats.query<{ flushes: string; transactions: string }>(
      `select (select coalesce(sum(fsyncs), 0) from pg_stat_io where object = 'wal')::bigint as flushes,
              (select xact_commit + xact_rollback from pg_stat_database where datname = $1)::bigint as transactions`,
      [this.database],
    );
    return { flushes: Number(rows[0]!.flushes), transactions: Number(rows[0]!.transactions) };
  }

  /** The WAL between two positions by record type; waits (up to 5 s) until it is flushed, as pg_walinspect reads only flushed WAL. */
  private async walRecords(from: string, to: string): Promise<{ type: string; count: number; bytes: number; fpiBytes: number }[] | null> {
    if (from === to) return [];
    const deadline = performance.now() + 5_000;
    while (!(await this.stats.query<{ flushed: boolean }>('select pg_current_wal_flush_lsn() >= $1::pg_lsn as flushed', [to])).rows[0]!.flushed) {
      if (performance.now() > deadline) return null;
      await sleep(50);
    }
    try {
      const { rows } = await this.stats.query<{ type: string; count: string; bytes: string; fpi: string }>(
        `select "resource_manager/record_type" as type, count, combined_size as bytes, fpi_size as fpi
           from pg_get_wal_stats($1, $2, true) where count > 0`,
        [from, to],
      );
      return rows.map((row) => ({ type: row.type, count: Number(row.count), bytes: Number(row.bytes), fpiBytes: Number(row.fpi) }));
    } catch {
      // Recycled after a checkpoint, or nothing but a page header in between: no figures rather than wrong ones.
      return null;
    }
  }
}
