import '../browse/styles.css';
import './home.css';

/** The part of /api/status this page shows. */
interface StatusReport {
  status: string;
  version: string;
  services: { database: { status: string; latency_ms: number } } & Record<string, { status: string }>;
}

const field = (name: string) => document.querySelector<HTMLElement>(`[data-field="${name}"]`)!;
const state = document.querySelector<HTMLElement>('[data-testid="server-state"]')!;

// The commands name the address this page was loaded from, so they can be pasted as they are.
field('origin').textContent = location.origin;

async function showStatus(): Promise<void> {
  try {
    const response = await fetch('/api/status', { headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(`/api/status answered ${response.status}`);
    const report = (await response.json()) as StatusReport;
    field('version').textContent = report.version;
    // Which parts pull the status down: on a machine without internet access, the outside price and token sources.
    const behind = Object.entries(report.services).filter(([, service]) => service.status !== 'operational').map(([name]) => name.replaceAll('_', ' '));
    field('status').textContent = behind.length > 0 ? `${report.status} (${behind.join(', ')})` : report.status;
    field('database').textContent = `${report.services.database.status}, ${report.services.database.latency_ms} ms`;
    field('summary').textContent = `Version ${report.version} · ${report.status}`;
    state.dataset.status = report.status;
  } catch (error) {
    field('summary').textContent = `The status report is unavailable: ${(error as Error).message}`;
    for (const name of ['version', 'status', 'database']) field(name).textContent = 'unknown';
    state.dataset.status = 'down';
  }
}

void showStatus();
