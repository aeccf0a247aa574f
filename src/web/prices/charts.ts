import htm from 'htm';
import { h } from 'preact';

const html = htm.bind(h);

export const money = (value: number | null) => (value === null ? '—' : `$${value.toFixed(2)}`);

/** Round axis steps (1, 2, 2.5 or 5 times a power of ten) from 0 past `max`, about `count` of them. */
export function niceTicks(max: number, count = 4): number[] {
  const raw = Math.max(max, 0.01) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((factor) => factor * power).find((candidate) => candidate >= raw)!;
  const ticks: number[] = [];
  for (let tick = 0; tick < max + step * 0.999; tick += step) ticks.push(Number(tick.toFixed(6)));
  return ticks.length > 1 ? ticks : [0, step];
}

const tickLabel = (value: number) => `$${Number.isInteger(value) ? value : value.toFixed(value < 1 ? 2 : 1)}`;

/** One colour per provider, told apart without the legend's order (and a text label beside each line). */
export const PROVIDER_COLOURS: Record<string, string> = {
  aws: '#d45d00',
  azure: '#0b62d6',
  gcp: '#137333',
  oci: '#b42318',
  lambda: '#8250df',
  runpod: '#6e7781',
  vast: '#bf8700',
};
const colourOf = (provider: string) => PROVIDER_COLOURS[provider] ?? '#1b1f24';

export interface ProviderPrice {
  provider: string;
  spotPriceUsd: number | null;
  onDemandPriceUsd: number | null;
}

/**
 * Spot and on-demand per provider as horizontal bars, each with its value written at its end, on a
 * dollar axis. Horizontal, so that a phone shows every provider's name and value without turning.
 */
export function ProviderBars({ rows }: { rows: ProviderPrice[] }) {
  const width = 360;
  const left = 58;
  const right = 46;
  const row = 36;
  const top = 6;
  const ticks = niceTicks(Math.max(...rows.flatMap((item) => [item.spotPriceUsd ?? 0, item.onDemandPriceUsd ?? 0])));
  const max = ticks.at(-1)!;
  const plot = width - left - right;
  const height = top + rows.length * row + 26;
  const x = (value: number) => left + (value / max) * plot;
  const bar = (item: ProviderPrice, kind: 'spot' | 'on-demand', value: number | null, y: number) =>
    value === null
      ? html`<text x=${left + 4} y=${y + 9} class="value missing">no ${kind} price</text>`
      : html`<g>
          <rect class=${`bar-${kind}`} data-kind=${kind} x=${left} y=${y} width=${Math.max(1, x(value) - left)} height="12"><title>${item.provider} ${kind} ${money(value)} per hour</title></rect>
          <text x=${x(value) + 4} y=${y + 10} class="value">${money(value)}</text>
        </g>`;
  return html`<svg viewBox=${`0 0 ${width} ${height}`} role="img" aria-label="Spot and on-demand price per provider, USD per GPU-hour" data-testid="chart">
    ${ticks.map(
      (tick) => html`<g class="tick">
        <line x1=${x(tick)} x2=${x(tick)} y1=${top} y2=${height - 22} />
        <text x=${x(tick)} y=${height - 8} text-anchor="middle" class="axis">${tickLabel(tick)}</text>
      </g>`,
    )}
    ${rows.map((item, index) => {
      const y = top + index * row + 4;
      return html`<g data-provider=${item.provider}>
        <text x=${left - 6} y=${y + 17} text-anchor="end" class="provider-label">${item.provider}</text>
        ${bar(item, 'spot', item.spotPriceUsd, y)}
        ${bar(item, 'on-demand', item.onDemandPriceUsd, y + 14)}
      </g>`;
    })}
  </svg>`;
}

export interface HistoryPoint {
  provider: string;
  at: number;
  price: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/**
 * A dot per price while they can be told apart; beyond that the line alone and a dot at its newest price
 * (90 days of half-hourly prices are 4,320 points a provider: dots would be a smear and 30,000 elements).
 */
const MAX_DOTS = 120;

/** Three times across [from, to] (its ends and middle: a day and an hour fit three abreast on a phone), labelled as finely as the span needs. */
function timeTicks(from: number, to: number): { at: number; label: string }[] {
  const span = to - from;
  // Days alone once the labels are days apart; the hour too while two labels could fall on one day.
  const format = new Intl.DateTimeFormat(
    undefined,
    span < DAY_MS ? { hour: '2-digit', minute: '2-digit' } : span < 6 * DAY_MS ? { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' } : { day: 'numeric', month: 'short' },
  );
  return [0, 0.5, 1].map((share) => {
    const at = from + (to - from) * share;
    return { at, label: format.format(at) };
  });
}

/** The colour swatch of a provider's line, for the legend. */
export function Swatch({ provider }: { provider: string }) {
  return html`<svg class="swatch" viewBox="0 0 14 14" aria-hidden="true"><rect width="14" height="14" rx="3" fill=${colourOf(provider)} /></svg>`;
}

/** A price over time, one line per provider, on a time axis and a dollar axis (the legend below it names the lines). */
export function HistoryLines({ points, from, to, kind }: { points: HistoryPoint[]; from: number; to: number; kind: string }) {
  const width = 360;
  const height = 230;
  const left = 40;
  const right = 12;
  const top = 10;
  const bottom = 26;
  const ticks = niceTicks(Math.max(...points.map((point) => point.price)));
  const max = ticks.at(-1)!;
  const x = (at: number) => left + ((at - from) / Math.max(1, to - from)) * (width - left - right);
  const y = (price: number) => height - bottom - (price / max) * (height - top - bottom);
  const providers = [...new Set(points.map((point) => point.provider))].sort();
  return html`<svg viewBox=${`0 0 ${width} ${height}`} role="img" aria-label=${`${kind} price over time per provider, USD per GPU-hour`} data-testid="history-chart">
    ${ticks.map(
      (tick) => html`<g class="tick">
        <line x1=${left} x2=${width - right} y1=${y(tick)} y2=${y(tick)} />
        <text x=${left - 4} y=${y(tick) + 4} text-anchor="end" class="axis">${tickLabel(tick)}</text>
      </g>`,
    )}
    ${timeTicks(from, to).map(
      (tick, index, all) => html`<text x=${x(tick.at)} y=${height - 8} text-anchor=${index === 0 ? 'start' : index === all.length - 1 ? 'end' : 'middle'} class="axis time">${tick.label}</text>`,
    )}
    ${providers.map((provider) => {
      const line = points.filter((point) => point.provider === provider).sort((a, b) => a.at - b.at);
      return html`<g class="series" data-provider=${provider} stroke=${colourOf(provider)} fill=${colourOf(provider)}>
        <polyline fill="none" stroke-width="2" points=${line.map((point) => `${x(point.at)},${y(point.price)}`).join(' ')} />
        ${(line.length <= MAX_DOTS ? line : line.slice(-1)).map(
          (point) => html`<circle cx=${x(point.at)} cy=${y(point.price)} r="2.5"><title>${provider} ${money(point.price)} at ${new Date(point.at).toLocaleString()}</title></circle>`,
        )}
      </g>`;
    })}
  </svg>`;
}
