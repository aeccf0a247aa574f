import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const FIXTURES = 'test/fixtures/prices';

/**
 * A local HTTP server answering with the providers' recorded responses, in their documented formats:
 * Azure Retail Prices (two pages), AWS spot.js and the on-demand price map, RunPod GraphQL, Vast offers.
 * `fail` makes a path answer 500.
 */
export async function startPriceSources() {
  const failing = new Set<string>();
  let base = '';
  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const send = async (file: string, type = 'application/json', transform = (text: string) => text) => {
      response.setHeader('content-type', type);
      response.end(transform(await readFile(`${FIXTURES}/${file}`, 'utf8')));
    };
    request.resume();
    if (failing.has(url.pathname)) {
      response.statusCode = 500;
      return response.end('{"error":"recorded outage"}');
    }
    if (url.pathname === '/api/retail/prices') {
      if (url.searchParams.get('page') === '2') return send('azure-retail-prices-page2.json');
      if (!url.searchParams.get('$filter')?.includes("armSkuName eq 'Standard_ND96isr_H100_v5'")) {
        response.statusCode = 400;
        return response.end('{"Error":"bad filter"}');
      }
      return send('azure-retail-prices.json', 'application/json', (text) => text.replace('http://PLACEHOLDER', base));
    }
    if (url.pathname === '/spot.js') return send('aws-spot.js', 'application/javascript');
    if (url.pathname === '/ondemand.json') return send('aws-ondemand.json');
    if (url.pathname === '/graphql' && request.method === 'POST') return send('runpod-gpu-types.json');
    if (url.pathname === '/api/v0/bundles/') return send('vast-bundles.json');
    response.statusCode = 404;
    response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    fail: (path: string) => failing.add(path),
    recover: (path: string) => failing.delete(path),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
