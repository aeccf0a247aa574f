import { z } from 'zod';
import type { GpuSlug } from '../catalog.js';
import { getJson, lowest, perGpu, type AdapterRow, type PriceAdapter } from './adapter.js';

const NAMES: Record<string, GpuSlug> = {
  'H100 SXM': 'h100',
  'H100 PCIE': 'h100',
  'H100 NVL': 'h100',
  H200: 'h200',
  'A100 SXM4': 'a100',
  'A100 PCIE': 'a100',
  L40S: 'l40s',
  'RTX 4090': 'rtx-4090',
  'Tesla V100': 'v100',
  'Tesla T4': 't4',
};

const answer = z.object({
  offers: z.array(
    z.object({
      gpu_name: z.string(),
      num_gpus: z.number().positive(),
      gpu_ram: z.number().nullish(),
      dph_total: z.number().nullish(),
      min_bid: z.number().nullish(),
      rentable: z.boolean().nullish(),
    }),
  ),
});

/**
 * Vast.ai's public offer search (`/api/v0/bundles/`): the cheapest rentable on-demand price and the
 * lowest interruptible bid per GPU-hour for each GPU model on the marketplace.
 */
export class VastAdapter implements PriceAdapter {
  readonly provider = 'vast' as const;

  constructor(private readonly baseUrl = 'https://console.vast.ai') {}

  async fetchRows(signal: AbortSignal): Promise<AdapterRow[]> {
    const query = { rentable: { eq: true }, gpu_name: { in: Object.keys(NAMES) }, order: [['dph_total', 'asc']], type: 'on-demand', limit: 1000 };
    const parsed = answer.parse(await getJson(`${this.baseUrl}/api/v0/bundles/?q=${encodeURIComponent(JSON.stringify(query))}`, signal));
    const rows = new Map<GpuSlug, { spot: number[]; onDemand: number[] }>();
    for (const offer of parsed.offers) {
      const slug = NAMES[offer.gpu_name];
      if (!slug || offer.rentable === false) continue;
      // The A100 of the feed is the 80 GB model.
      if (slug === 'a100' && (offer.gpu_ram ?? 0) < 79_000) continue;
      const entry = rows.get(slug) ?? { spot: [], onDemand: [] };
      if (offer.dph_total) entry.onDemand.push(perGpu(offer.dph_total, offer.num_gpus));
      if (offer.min_bid) entry.spot.push(perGpu(offer.min_bid, offer.num_gpus));
      rows.set(slug, entry);
    }
    return [...rows].map(([slug, prices]) => ({ slug, spotPriceUsd: lowest(prices.spot), onDemandPriceUsd: lowest(prices.onDemand) }));
  }
}
