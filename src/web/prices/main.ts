import htm from 'htm';
import { h, render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { PriceHistoryDocument, PricesPageDocument, type PricesPageQuery } from '../generated/pages/graphql.js';
import { request } from '../browse/api.js';
import { useScrollCue } from '../browse/scroll-cue.js';
import { HistoryLines, money, ProviderBars, Swatch, type HistoryPoint } from './charts.js';
import '../browse/styles.css';
import './prices.css';

const html = htm.bind(h);
type Row = PricesPageQuery['gpuPrices'][number];
type Column = 'gpu' | 'provider' | 'spotPriceUsd' | 'onDemandPriceUsd' | 'savingsPct' | 'lastSeen';
type Kind = 'onDemandPriceUsd' | 'spotPriceUsd';

const COLUMNS: { key: Column; label: string; numeric: boolean }[] = [
  { key: 'gpu', label: 'GPU', numeric: false },
  { key: 'provider', label: 'Provider', numeric: false },
  { key: 'spotPriceUsd', label: 'Spot $/h', numeric: true },
  { key: 'onDemandPriceUsd', label: 'On-demand $/h', numeric: true },
  { key: 'savingsPct', label: 'Savings %', numeric: true },
  { key: 'lastSeen', label: 'Last seen', numeric: false },
];

const KIND_LABELS: Record<Kind, string> = { onDemandPriceUsd: 'On-demand', spotPriceUsd: 'Spot' };
const WINDOWS = [7, 30, 90] as const;
const DAY_MS = 24 * 60 * 60 * 1000;

/** The bundled reference snapshot (source `reference`): list prices compiled by hand, served until real ones arrive. */
const isReference = (row: { source: string }) => row.source === 'reference';
const day = (iso: string) => new Date(iso).toLocaleDateString(undefined, { day: 'numeric', month: 'short', year: 'numeric' });

function Freshness({ row }: { row: Row }) {
  if (isReference(row)) return html`<span class="freshness freshness-reference" title="Bundled with the gateway: the providers' public list prices">reference, ${day(row.lastSeen)}</span>`;
  return html`<span class=${`freshness freshness-${row.freshness.toLowerCase()}`}>${row.freshness.toLowerCase()}</span>`;
}

/** The chosen GPU's price at every provider over the last days, one request per provider (each well under the history's row bound). */
function History({ gpu, providers }: { gpu: string; providers: string[] }) {
  const [days, setDays] = useState<(typeof WINDOWS)[number]>(30);
  const [kind, setKind] = useState<Kind>('onDemandPriceUsd');
  const [points, setPoints] = useState<{ provider: string; at: number; spotPriceUsd: number | null; onDemandPriceUsd: number | null }[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [period, setPeriod] = useState({ from: 0, to: 0 });

  useEffect(() => {
    const to = Date.now();
    const from = to - days * DAY_MS;
    // An answer for a GPU or period no longer chosen is dropped, whatever order the answers come in.
    let chosen = true;
    setPoints(null);
    setError(null);
    Promise.all(providers.map((provider) => request(PriceHistoryDocument, { gpu, provider, from: new Date(from).toISOString() }))).then(
      (answers) => {
        if (!chosen) return;
        setPeriod({ from, to });
        setPoints(answers.flatMap((answer) => answer.gpuPriceHistory.map((row) => ({ ...row, at: Date.parse(row.lastSeen) }))));
      },
      (failure: Error) => chosen && setError(failure.message),
    );
    return () => {
      chosen = false;
    };
  }, [gpu, providers.join(','), days]);

  const shown: HistoryPoint[] = (points ?? []).flatMap((point) => (point[kind] === null ? [] : [{ provider: point.provider, at: point.at, price: point[kind]! }]));
  // The time axis starts at the first price in the window: two days of prices fill the width, not the last 7 % of 30 days.
  const firstAt = Math.min(...shown.map((point) => point.at));
  const newest = new Map<string, HistoryPoint>();
  for (const point of [...shown].sort((a, b) => a.at - b.at)) newest.set(point.provider, point);

  return html`<section aria-labelledby="history-title">
    <h2 id="history-title">Price history</h2>
    <div class="controls">
      <label>Period
        <select aria-label="Period" value=${days} onChange=${(event: Event) => setDays(Number((event.target as HTMLSelectElement).value) as (typeof WINDOWS)[number])}>
          ${WINDOWS.map((value) => html`<option value=${value}>Last ${value} days</option>`)}
        </select>
      </label>
      <label>Price
        <select aria-label="Price" value=${kind} onChange=${(event: Event) => setKind((event.target as HTMLSelectElement).value as Kind)}>
          ${(Object.keys(KIND_LABELS) as Kind[]).map((value) => html`<option value=${value}>${KIND_LABELS[value]}</option>`)}
        </select>
      </label>
    </div>
    ${error
      ? html`<p class="error" role="alert">${error}</p>`
      : points === null
        ? html`<p class="loading" role="status">Loading the history…</p>`
        : shown.length === 0
          ? html`<p class="empty" data-testid="history-empty">No ${KIND_LABELS[kind].toLowerCase()} price was recorded for this GPU in the last ${days} days. Prices arrive as the provider adapters run (every 30 minutes) or a snapshot is posted to <code>/api/v1/prices/snapshots</code>.</p>`
          : html`<figure class="chart">
              <${HistoryLines} points=${shown} from=${Math.max(period.from, firstAt - (period.to - firstAt) * 0.05)} to=${period.to} kind=${KIND_LABELS[kind]} />
              <figcaption>
                <ul class="legend" data-testid="history-legend">
                  ${[...newest.values()].sort((a, b) => a.provider.localeCompare(b.provider)).map(
                    (point) => html`<li><${Swatch} provider=${point.provider} /> ${point.provider} <strong>${money(point.price)}</strong> <small>${new Date(point.at).toLocaleDateString()}</small></li>`,
                  )}
                </ul>
                ${KIND_LABELS[kind]} USD per GPU-hour; the newest price of each provider.
              </figcaption>
            </figure>`}
  </section>`;
}

function PricesPage() {
  const [rows, setRows] = useState<Row[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [sort, setSort] = useState<{ key: Column; ascending: boolean }>({ key: 'onDemandPriceUsd', ascending: true });
  const [gpu, setGpu] = useState('h100');
  const tableBox = useScrollCue<HTMLDivElement>();

  const load = () => {
    setError(null);
    request(PricesPageDocument).then(
      (data) => setRows(data.gpuPrices),
      (failure: Error) => setError(failure.message),
    );
  };
  useEffect(load, []);

  const sorted = useMemo(() => {
    if (!rows) return [];
    const value = (row: Row) => row[sort.key];
    return [...rows].sort((a, b) => {
      const [x, y] = [value(a), value(b)];
      // Missing prices go last whatever the direction.
      if (x === null) return y === null ? 0 : 1;
      if (y === null) return -1;
      const order = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
      return sort.ascending ? order : -order;
    });
  }, [rows, sort]);

  if (error) return html`<div class="error" role="alert"><p>${error}</p><button type="button" onClick=${load}>Try again</button></div>`;
  if (!rows) return html`<p class="loading" role="status">Loading prices…</p>`;
  const gpus = [...new Map(rows.map((row) => [row.slug, row.gpu])).entries()];
  const chartRows = rows.filter((row) => row.slug === gpu).sort((a, b) => a.provider.localeCompare(b.provider));
  const references = rows.filter(isReference);

  return html`<div class="shell">
    <header><h1>GPU prices</h1><nav class="links-inline"><a href="/">Home</a> <a href="/browse">Tool directory</a></nav></header>
    <p class="lede">Hourly USD per GPU, the newest price seen at each provider. Also at <code>/api/v1/prices</code> (open, CORS).</p>
    ${references.length > 0
      ? html`<p class="notice notice-reference" data-testid="reference-notice">
          ${references.length === rows.length ? 'Every price below is' : `${references.length} of the ${rows.length} prices below are`} from the reference
          snapshot bundled with the gateway: the providers' public list prices around ${day(references[0]!.lastSeen)}, compiled by hand. Each is
          replaced as soon as a provider adapter (every 30 minutes) or a posted snapshot brings a newer price for that GPU and provider.
        </p>`
      : null}
    <label class="gpu-choice">GPU
      <select aria-label="GPU" value=${gpu} onChange=${(event: Event) => setGpu((event.target as HTMLSelectElement).value)}>
        ${gpus.map(([slug, name]) => html`<option value=${slug}>${name}</option>`)}
      </select>
    </label>
    <section aria-labelledby="chart-title">
      <h2 id="chart-title">Spot vs on-demand, now</h2>
      <figure class="chart">
        <${ProviderBars} rows=${chartRows} />
        <figcaption><span class="key key-spot"></span> spot <span class="key key-on-demand"></span> on-demand (USD per GPU-hour)</figcaption>
      </figure>
    </section>
    <${History} gpu=${gpu} providers=${chartRows.map((row) => row.provider)} />
    <section aria-labelledby="table-title">
      <h2 id="table-title">All prices</h2>
      <div class="table-scroll" ref=${tableBox} tabIndex="0" aria-label="All prices (scrolls sideways)">
        <table data-testid="prices-table">
          <thead>
            <tr>
              ${COLUMNS.map(
                (column) => html`<th scope="col" aria-sort=${sort.key === column.key ? (sort.ascending ? 'ascending' : 'descending') : 'none'} class=${column.numeric ? 'num' : ''}>
                  <button type="button" class="sort" onClick=${() => setSort((current) => ({ key: column.key, ascending: current.key === column.key ? !current.ascending : true }))}>
                    ${column.label}${sort.key === column.key ? (sort.ascending ? ' ▲' : ' ▼') : ''}
                  </button>
                </th>`,
              )}
              <th scope="col">Freshness</th>
            </tr>
          </thead>
          <tbody>
            ${sorted.map(
              (row) => html`<tr>
                <td>${row.gpu}</td>
                <td>${row.provider}</td>
                <td class="num">${money(row.spotPriceUsd)}</td>
                <td class="num">${money(row.onDemandPriceUsd)}</td>
                <td class="num">${row.savingsPct === null ? '—' : `${row.savingsPct}%`}</td>
                <td>${new Date(row.lastSeen).toISOString().slice(0, 10)} <small>(${row.source})</small></td>
                <td><${Freshness} row=${row} /></td>
              </tr>`,
            )}
          </tbody>
        </table>
      </div>
    </section>
  </div>`;
}

const root = document.getElementById('app')!;
root.replaceChildren();
render(h(PricesPage, {}), root);
