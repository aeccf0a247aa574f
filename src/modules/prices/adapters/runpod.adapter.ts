import { z } from 'zod';
import type { GpuSlug } from '../catalog.js';
import { getJson, lowest, type AdapterRow, type PriceAdapter } from './adapter.js';

const NAMES: Record<string, GpuSlug> = {
  'H100 SXM': 'h100',
  'H100 PCIe': 'h100',
  'H100 NVL': 'h100',
  H200: 'h200',
  'H200 SXM': 'h200',
  'A100 SXM': 'a100',
  'A100 PCIe': 'a100',
  L40S: 'l40s',
  'RTX 4090': 'rtx-4090',
  'Tesla V100': 'v100',
  V100: 'v100',
};

const answer = z.object({
  data: z.object({
    gpuTypes: z.array(
      z.object({
        id: z.string(),
        displayName: z.string(),
        memoryInGb: z.number().nullish(),
        securePrice: z.number().nullish(),
        communityPrice: z.number().nullish(),
        secureSpotPrice: z.number().nullish(),
        communitySpotPrice: z.number().nullish(),
      }),
    ),
  }),
});

const QUERY = 'query GpuTypes { gpuTypes { id displayName memoryInGb securePrice communityPrice secureSpotPrice communitySpotPrice } }';

/** RunPod's public GraphQL `gpuTypes` (no key needed): on-demand and spot per GPU-hour, cheapest cloud. */
export class RunpodAdapter implements PriceAdapter {
  readonly provider = 'runpod' as const;

  constructor(private readonly baseUrl = 'https://api.runpod.io') {}

  async fetchRows(signal: AbortSignal): Promise<AdapterRow[]> {
    const parsed = answer.parse(
      await getJson(`${this.baseUrl}/graphql`, signal, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: QUERY }),
      }),
    );
    const rows = new Map<GpuSlug, { spot: (number | null | undefined)[]; onDemand: (number | null | undefined)[] }>();
    for (const type of parsed.data.gpuTypes) {
      const slug = NAMES[type.displayName];
      if (!slug || (slug === 'a100' && (type.memoryInGb ?? 0) < 80)) continue;
      const entry = rows.get(slug) ?? { spot: [], onDemand: [] };
      entry.onDemand.push(type.securePrice, type.communityPrice);
      entry.spot.push(type.secureSpotPrice, type.communitySpotPrice);
      rows.set(slug, entry);
    }
    return [...rows].map(([slug, prices]) => ({ slug, spotPriceUsd: lowest(prices.spot), onDemandPriceUsd: lowest(prices.onDemand) }));
  }
}
