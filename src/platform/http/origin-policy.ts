import type { IncomingHttpHeaders } from 'node:http';

/**
 * Who may reach an endpoint that another site's page must not drive, such as MCP's (the specification:
 * servers MUST validate `Origin` against DNS rebinding). A page at `http://evil.example:3000` whose name
 * is rebound to this server's address is same-origin to the browser, so CORS never asks; the request
 * still says where it comes from:
 *
 * - `Origin`: browsers send it with every POST and agents send none. Present, it must be one of the
 *   allowed origins (none unless configured), else the request is refused. The server's own name does
 *   not make an origin allowed: a rebinding page is "same-origin" by its very construction.
 * - `Host`: the rebound name. Only the host names the server is reached by pass: PUBLIC_URL's,
 *   `localhost`, `127.0.0.1`, `[::1]` and those configured (a proxy's upstream name). The port is not
 *   compared: the page's port is the server's port anyway, and a port mapping or proxy changes the one a
 *   client sees. `X-Forwarded-Host` is not read, even behind a trusted proxy: a page may set that header
 *   itself, but never `Host`.
 */
export class OriginPolicy {
  private readonly origins: ReadonlySet<string>;
  private readonly hostnames: ReadonlySet<string>;

  constructor(settings: { publicUrl: string; allowedOrigins: readonly string[]; allowedHosts: readonly string[] }) {
    this.origins = new Set(settings.allowedOrigins);
    this.hostnames = new Set([new URL(settings.publicUrl).hostname, 'localhost', '127.0.0.1', '[::1]', ...settings.allowedHosts]);
  }

  /** Which header makes a request unwelcome (`origin` first), or undefined when it may pass. */
  refusal(headers: IncomingHttpHeaders): 'origin' | 'host' | undefined {
    const origin = headers.origin;
    if (origin !== undefined && !this.origins.has(normalisedOrigin(origin))) return 'origin';
    const hostname = hostnameOf(headers.host);
    if (hostname === undefined || !this.hostnames.has(hostname)) return 'host';
    return undefined;
  }
}

/** `Origin` as browsers serialise it, or the text as sent when it is not one (`null`, a list, junk). */
function normalisedOrigin(origin: string): string {
  return URL.canParse(origin) ? new URL(origin).origin : origin;
}

/** The host name a `Host` header names (lower case, IPv6 in brackets); undefined for anything else (`a@b`, `a/b`). */
function hostnameOf(host: string | undefined): string | undefined {
  if (host === undefined || !URL.canParse(`http://${host}`)) return undefined;
  const url = new URL(`http://${host}`);
  const authorityOnly = url.username === '' && url.password === '' && url.pathname === '/' && url.search === '' && url.hash === '' && !host.includes('@');
  return authorityOnly ? url.hostname : undefined;
}
