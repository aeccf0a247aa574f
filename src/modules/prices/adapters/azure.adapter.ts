import { z } from 'zod';
import type { GpuSlug } from '../catalog.js';
import { getJson, lowest, perGpu, type AdapterRow, type PriceAdapter } from './adapter.js';

/** VM sizes that carry one kind of GPU, and how many. */
const SKUS: Record<string, { slug: GpuSlug; gpus: number }> = {
  Standard_ND96isr_H100_v5: { slug: 'h100', gpus: 8 },
  Standard_ND96isr_H200_v5: { slug: 'h200', gpus: 8 },
  Standard_NC24ads_A100_v4: { slug: 'a100', gpus: 1 },
  Standard_NC4as_T4_v3: { slug: 't4', gpus: 1 },
  Standard_NC6s_v3: { slug: 'v100', gpus: 1 },
};

const page = z.object({
  Items: z.array(
    z.object({
      currencyCode: z.string(),
      retailPrice: z.number(),
      armRegionName: z.string(),
      armSkuName: z.string(),
      skuName: z.string(),
      productName: z.string(),
      type: z.string(),
      unitOfMeasure: z.string(),
    }),
  ),
  NextPageLink: z.string().nullable().optional(),
});

/**
 * The Azure Retail Prices API (public, no account): Linux pay-as-you-go and Spot prices of the GPU VM
 * sizes in one region, per GPU-hour.
 */
export class AzureAdapter implements PriceAdapter {
  readonly provider = 'azure' as const;

  constructor(
    private readonly baseUrl = 'https://prices.azure.com',
    private readonly region = 'eastus',
  ) {}

  async fetchRows(signal: AbortSignal): Promise<AdapterRow[]> {
    const skus = Object.keys(SKUS).map((sku) => `armSkuName eq '${sku}'`).join(' or ');
    const filter = `serviceName eq 'Virtual Machines' and armRegionName eq '${this.region}' and priceType eq 'Consumption' and (${skus})`;
    let url: string | null = `${this.baseUrl}/api/retail/prices?currencyCode='USD'&$filter=${encodeURIComponent(filter)}`;
    const items: z.infer<typeof page>['Items'] = [];
    for (let pages = 0; url && pages < 10; pages++) {
      const parsed = page.parse(await getJson(url, signal));
      items.push(...parsed.Items);
      url = parsed.NextPageLink ?? null;
    }
    const rows = new Map<GpuSlug, { spot: number[]; onDemand: number[] }>();
    for (const item of items) {
      const sku = SKUS[item.armSkuName];
      if (!sku || item.currencyCode !== 'USD' || item.unitOfMeasure !== '1 Hour' || item.type !== 'Consumption') continue;
      if (/windows/i.test(item.productName) || /low priority/i.test(item.skuName)) continue;
      const entry = rows.get(sku.slug) ?? { spot: [], onDemand: [] };
      (/ spot$/i.test(item.skuName) ? entry.spot : entry.onDemand).push(perGpu(item.retailPrice, sku.gpus));
      rows.set(sku.slug, entry);
    }
    return [...rows].map(([slug, prices]) => ({ slug, spotPriceUsd: lowest(prices.spot), onDemandPriceUsd: lowest(prices.onDemand) }));
  }
}
