/**
 * The identity of a tool's URL: scheme and host lower-cased, the default port and a trailing slash
 * removed (`HTTPS://Example.com:443/app/` and `https://example.com/app` are the same tool).
 * Returns undefined for anything that is not an absolute http(s) URL.
 */
export function normalizeToolUrl(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (!url.hostname) return undefined;
  // WHATWG URL parsing already lower-cases scheme and host and drops the scheme's default port.
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.protocol}//${url.host}${path}${url.search}${url.hash}`;
}

/** A URL-friendly slug of a tool name: `My Tool 2.0!` → `my-tool-2-0`. */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/g, '');
  return slug || 'tool';
}
