import { z } from 'zod';
import type { GpuSlug } from '../catalog.js';
import { lowest, perGpu, type AdapterRow, type PriceAdapter } from './adapter.js';

const SIZES: Record<string, { slug: GpuSlug; gpus: number }> = {
  'p5.48xlarge': { slug: 'h100', gpus: 8 },
  'p5e.48xlarge': { slug: 'h200', gpus: 8 },
  'p4de.24xlarge': { slug: 'a100', gpus: 8 },
  'g6e.xlarge': { slug: 'l40s', gpus: 1 },
  'g5.xlarge': { slug: 'a10g', gpus: 1 },
  'g4dn.xlarge': { slug: 't4', gpus: 1 },
  'p3.2xlarge': { slug: 'v100', gpus: 1 },
};

const spotFile = z.object({
  config: z.object({
    regions: z.array(
      z.object({
        region: z.string(),
        instanceTypes: z.array(
          z.object({
            sizes: z.array(z.object({ size: z.string(), valueColumns: z.array(z.object({ name: z.string(), prices: z.object({ USD: z.string() }) })) })),
          }),
        ),
      }),
    ),
  }),
});

const onDemandFile = z.object({
  regions: z.record(z.string(), z.record(z.string(), z.object({ price: z.string(), 'Instance Type': z.string() }))),
});

/**
 * AWS's public price files: the spot advisor data (`spot.js`, JSONP) and the on-demand Linux price
 * map of one region, per GPU-hour.
 */
export class AwsAdapter implements PriceAdapter {
  readonly provider = 'aws' as const;

  constructor(
    private readonly spotUrl = 'https://website.spot.ec2.aws.a2z.com/spot.js',
    private readonly onDemandUrl = 'https://b0.p.awsstatic.com/pricing/2.0/meteredUnitMaps/ec2/USD/current/ec2-ondemand-without-sec-sel/US%20East%20(N.%20Virginia)/Linux/index.json',
    private readonly region = 'us-east-1',
    private readonly regionName = 'US East (N. Virginia)',
  ) {}

  async fetchRows(signal: AbortSignal): Promise<AdapterRow[]> {
    const [spotText, onDemandBody] = await Promise.all([
      fetch(this.spotUrl, { signal }).then(async (response) => {
        if (!response.ok) throw new Error(`${this.spotUrl} answered ${response.status}`);
        return response.text();
      }),
      fetch(this.onDemandUrl, { signal }).then(async (response) => {
        if (!response.ok) throw new Error(`${this.onDemandUrl} answered ${response.status}`);
        return response.json() as Promise<unknown>;
      }),
    ]);
    // spot.js is JSONP: callback({...});
    const json = spotText.slice(spotText.indexOf('(') + 1, spotText.lastIndexOf(')'));
    const spot = spotFile.parse(JSON.parse(json));
    const onDemand = onDemandFile.parse(onDemandBody);

    const spotPrices = new Map<GpuSlug, number[]>();
    for (const region of spot.config.regions.filter((candidate) => candidate.region === this.region)) {
      for (const size of region.instanceTypes.flatMap((type) => type.sizes)) {
        const known = SIZES[size.size];
        const linux = size.valueColumns.find((column) => column.name === 'linux');
        if (!known || !linux || Number.isNaN(Number(linux.prices.USD))) continue;
        spotPrices.set(known.slug, [...(spotPrices.get(known.slug) ?? []), perGpu(Number(linux.prices.USD), known.gpus)]);
      }
    }
    const onDemandPrices = new Map<GpuSlug, number[]>();
    for (const entry of Object.values(onDemand.regions[this.regionName] ?? {})) {
      const known = SIZES[entry['Instance Type']];
      if (!known || Number.isNaN(Number(entry.price))) continue;
      onDemandPrices.set(known.slug, [...(onDemandPrices.get(known.slug) ?? []), perGpu(Number(entry.price), known.gpus)]);
    }
    const slugs = new Set([...spotPrices.keys(), ...onDemandPrices.keys()]);
    return [...slugs].map((slug) => ({ slug, spotPriceUsd: lowest(spotPrices.get(slug) ?? []), onDemandPriceUsd: lowest(onDemandPrices.get(slug) ?? []) }));
  }
}
