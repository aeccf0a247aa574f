/**
 * The gateway's memory, read from outside through the V8 inspector: no debug route or signal handler in
 * the product. The bench starts the gateway with `--inspect-port=127.0.0.1:<port>`, which only names
 * the port: nothing listens until the bench sends SIGUSR1 (Node's documented way to open the inspector
 * of a running process), so every scenario before the memory readings runs the gateway as production
 * does. Over the DevTools protocol it then asks for `process.memoryUsage()` and forces full garbage
 * collections (`HeapProfiler.collectGarbage`), as `--expose-gc` would without changing the flags.
 */
import { writeFile } from 'node:fs/promises';
import WebSocket from 'ws';

export interface MemoryReading {
  heapUsed: number;
  heapTotal: number;
  rss: number;
  external: number;
  arrayBuffers: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class GatewayInspector {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void }>();
  /** The chunks of the heap snapshot being taken (the only events asked for). */
  private snapshotChunks: string[] = [];

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { id?: number; method?: string; params?: { chunk?: string }; result?: unknown; error?: { message: string } };
      if (message.id === undefined) {
        if (message.method === 'HeapProfiler.addHeapSnapshotChunk') this.snapshotChunks.push(message.params?.chunk ?? '');
        return;
      }
      const waiting = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error) waiting?.reject(new Error(message.error.message));
      else waiting?.resolve(message.result);
    });
    socket.on('close', () => {
      for (const { reject } of this.pending.values()) reject(new Error('the inspector connection closed'));
      this.pending.clear();
    });
  }

  /** Opens the inspector of process `pid` (started with `--inspect-port=127.0.0.1:<port>`) and connects to it. */
  static async attach(pid: number, port: number): Promise<GatewayInspector> {
    process.kill(pid, 'SIGUSR1');
    const deadline = Date.now() + 10_000;
    let url: string | undefined;
    while (!url) {
      const targets = await fetch(`http://127.0.0.1:${port}/json/list`).then(
        (response) => (response.ok ? (response.json() as Promise<{ webSocketDebuggerUrl?: string }[]>) : []),
        () => [],
      );
      url = targets[0]?.webSocketDebuggerUrl;
      if (!url) {
        if (Date.now() > deadline) throw new Error(`the inspector of process ${pid} did not open on port ${port}`);
        await sleep(100);
      }
    }
    const socket = new WebSocket(url, { perMessageDeflate: false });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    return new GatewayInspector(socket);
  }

  /** `process.memoryUsage()` of the gateway; `collect`: after two full garbage collections. */
  async memory(collect: boolean): Promise<MemoryReading> {
    if (collect) {
      // The second pass frees what the first one's finalisers let go.
      await this.call('HeapProfiler.collectGarbage');
      await this.call('HeapProfiler.collectGarbage');
    }
    const { result } = (await this.call('Runtime.evaluate', { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true })) as {
      result: { value: string };
    };
    return JSON.parse(result.value) as MemoryReading;
  }

  /** Writes a heap snapshot of the gateway (after a full collection) to `path`, for Chrome DevTools' Memory tab. */
  async heapSnapshot(path: string): Promise<void> {
    this.snapshotChunks = [];
    await this.call('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    await writeFile(path, this.snapshotChunks.join(''));
    this.snapshotChunks = [];
  }

  /** Starts the V8 CPU profiler in the gateway (sampling every 100 µs). */
  async startProfile(): Promise<void> {
    await this.call('Profiler.enable');
    await this.call('Profiler.setSamplingInterval', { interval: 100 });
    await this.call('Profiler.start');
  }

  /** Stops the profiler and writes what it sampled to `path` (a `.cpuprofile`, as `--cpu-prof` writes). */
  async stopProfile(path: string): Promise<void> {
    const { profile } = (await this.call('Profiler.stop')) as { profile: unknown };
    await writeFile(path, JSON.stringify(profile));
  }

  /**
   * Starts V8's sampling heap profiler: one allocation in about every 32 KB is recorded with its stack.
   * `garbage`: also when the object is collected later (what is made and thrown away per event), else
   * only objects that outlived a young-generation collection (what the full collections must clear).
   */
  async startAllocationSampling(garbage: 'all' | 'outlived young'): Promise<void> {
    await this.call('HeapProfiler.enable');
    await this.call('HeapProfiler.startSampling', { samplingInterval: 32_768, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: garbage === 'all' });
  }

  /** Stops it and writes the samples to `path` (a `.heapprofile`, for Chrome DevTools' Memory tab). */
  async stopAllocationSampling(path: string): Promise<void> {
    const { profile } = (await this.call('HeapProfiler.stopSampling')) as { profile: unknown };
    await writeFile(path, JSON.stringify(profile));
  }

  close(): void {
    this.socket.close();
  }

  private call(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }
}
