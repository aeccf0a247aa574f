import type { GpuSlug, Provider } from '../catalog.js';

/** One GPU's hourly per-GPU prices at a provider, as an adapter read them. */
export interface AdapterRow {
  slug: GpuSlug;
  spotPriceUsd: number | null;
  onDemandPriceUsd: number | null;
}

/**
 * A provider's public pricing endpoint, read without an account. `fetchRows` throws when the source
 * cannot be read or its answer does not have the documented shape; it never returns half a guess.
 */
export interface PriceAdapter {
  readonly provider: Provider;
  fetchRows(signal: AbortSignal): Promise<AdapterRow[]>;
}

export async function getJson(url: string, signal: AbortSignal, init: RequestInit = {}): Promise<unknown> {
  const response = await fetch(url, { ...init, signal, headers: { accept: 'application/json', ...(init.headers ?? {}) } });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return response.json();
}

/** Cheapest of the candidates that are numbers, or null. */
export function lowest(values: readonly (number | null | undefined)[]): number | null {
  const numbers = values.filter((value): value is number => typeof value === 'number' && Number.isFinite(value) && value > 0);
  return numbers.length ? Math.min(...numbers) : null;
}

/** Rounds a per-GPU price to 4 decimals (the precision the feed stores). */
export const perGpu = (price: number, gpus: number) => Math.round((price / gpus) * 10_000) / 10_000;
