/** The GPU models and cloud providers of the price feed (seed 002). */
export const GPUS = {
  h100: 'NVIDIA H100 80GB',
  h200: 'NVIDIA H200 141GB',
  a100: 'NVIDIA A100 80GB',
  l40s: 'NVIDIA L40S 48GB',
  a10g: 'NVIDIA A10G 24GB',
  t4: 'NVIDIA T4 16GB',
  'rtx-4090': 'NVIDIA GeForce RTX 4090 24GB',
  v100: 'NVIDIA V100 16GB',
} as const;

export type GpuSlug = keyof typeof GPUS;
export const GPU_SLUGS = Object.keys(GPUS) as GpuSlug[];

export const PROVIDERS = ['aws', 'azure', 'gcp', 'oci', 'lambda', 'runpod', 'vast'] as const;
export type Provider = (typeof PROVIDERS)[number];

export const REFRESH_INTERVAL_MINUTES = 30;

export const isGpuSlug = (value: string): value is GpuSlug => Object.hasOwn(GPUS, value);
export const isProvider = (value: string): value is Provider => (PROVIDERS as readonly string[]).includes(value);

/** Percent saved by spot against on-demand, one decimal; null when either price is missing. */
export function savingsPct(spot: number | null, onDemand: number | null): number | null {
  if (spot === null || onDemand === null || onDemand <= 0) return null;
  return Math.round(((onDemand - spot) / onDemand) * 1000) / 10;
}

export type Freshness = 'fresh' | 'stale' | 'expired';

/** fresh under 2 h, stale under 12 h, expired beyond. */
export function freshnessOf(ageMs: number): Freshness {
  if (ageMs < 2 * 3_600_000) return 'fresh';
  if (ageMs < 12 * 3_600_000) return 'stale';
  return 'expired';
}
