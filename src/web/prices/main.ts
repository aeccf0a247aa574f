import htm from 'htm';
import { h, render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { PricesPageDocument, type PricesPageQuery } from '../generated/pages/graphql.js';
import { request } from '../browse/api.js';
import '../browse/styles.css';
import './prices.css';

const html = htm.bind(h);
type Row = PricesPageQuery['gpuPrices'][number];
type Column = 'gpu' | 'provider' | 'spotPriceUsd' | 'onDemandPriceUsd' | 'savingsPct' | 'lastSeen';

const COLUMNS: { key: Column; label: string; numeric: boolean }[] = [
  { key: 'gpu', label: 'GPU', numeric: false },
  { key: 'provider', label: 'Provider', numeric: false },
  { key: 'spotPriceUsd', label: 'Spot $/h', numeric: true },
  { key: 'onDemandPriceUsd', label: 'On-demand $/h', numeric: true },
  { key: 'savingsPct', label: 'Savings %', numeric: true },
  { key: 'lastSeen', label: 'Last seen', numeric: false },
];

const money = (value: number | null) => (value === null ? '—' : `$${value.toFixed(2)}`);

/** Spot vs on-demand per provider for one GPU, as SVG bars (missing prices simply have no bar). */
function Chart({ rows }: { rows: Row[] }) {
  const max = Math.max(0.01, ...rows.flatMap((row) => [row.spotPriceUsd ?? 0, row.onDemandPriceUsd ?? 0]));
  const band = 64;
  const height = 220;
  const width = Math.max(320, rows.length * band + 40);
  const y = (value: number) => height - 30 - (value / max) * (height - 50);
  return html`<figure class="chart">
    <svg viewBox=${`0 0 ${width} ${height}`} role="img" aria-label="Spot and on-demand price per provider" data-testid="chart">
      ${rows.map((row, index) => {
        const x = 30 + index * band;
        return html`<g>
          ${row.spotPriceUsd !== null
            ? html`<rect class="bar-spot" data-kind="spot" x=${x} y=${y(row.spotPriceUsd)} width="22" height=${height - 30 - y(row.spotPriceUsd)}><title>${row.provider} spot ${money(row.spotPriceUsd)}</title></rect>`
            : null}
          ${row.onDemandPriceUsd !== null
            ? html`<rect class="bar-on-demand" data-kind="on-demand" x=${x + 24} y=${y(row.onDemandPriceUsd)} width="22" height=${height - 30 - y(row.onDemandPriceUsd)}><title>${row.provider} on-demand ${money(row.onDemandPriceUsd)}</title></rect>`
            : null}
          <text x=${x + 23} y=${height - 12} text-anchor="middle" class="axis">${row.provider}</text>
        </g>`;
      })}
    </svg>
    <figcaption><span class="key key-spot"></span> spot <span class="key key-on-demand"></span> on-demand (USD per GPU-hour)</figcaption>
  </figure>`;
}

function PricesPage() {
  const [rows, setRows] = useState<Row[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [sort, setSort] = useState<{ key: Column; ascending: boolean }>({ key: 'onDemandPriceUsd', ascending: true });
  const [gpu, setGpu] = useState('h100');

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

  return html`<div class="shell">
    <header><h1>GPU prices</h1><a href="/browse">Tool directory</a></header>
    <p class="lede">Hourly USD per GPU, the newest price seen at each provider. Also at <code>/api/v1/prices</code> (open, CORS).</p>
    <section aria-labelledby="chart-title">
      <h2 id="chart-title">Spot vs on-demand</h2>
      <label>GPU
        <select value=${gpu} onChange=${(event: Event) => setGpu((event.target as HTMLSelectElement).value)}>
          ${gpus.map(([slug, name]) => html`<option value=${slug}>${name}</option>`)}
        </select>
      </label>
      <${Chart} rows=${chartRows} />
    </section>
    <section aria-labelledby="table-title">
      <h2 id="table-title">All prices</h2>
      <div class="table-scroll">
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
                <td><span class=${`freshness freshness-${row.freshness.toLowerCase()}`}>${row.freshness.toLowerCase()}</span></td>
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
