import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A local HTTP server speaking Pyth Hermes `GET /v2/updates/price/latest?ids[]=…` (parsed prices). */
export async function startFakeHermes(prices: Record<string, number>, publishTime: () => number) {
  let down = false;
  const server = createServer((request, response) => {
    if (down) {
      response.statusCode = 503;
      return response.end('unavailable');
    }
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname !== '/v2/updates/price/latest') {
      response.statusCode = 404;
      return response.end();
    }
    const ids = url.searchParams.getAll('ids[]');
    const parsed = ids
      .filter((id) => prices[id] !== undefined)
      .map((id) => ({
        id,
        price: { price: String(Math.round(prices[id]! * 1e8)), conf: '1000000', expo: -8, publish_time: publishTime() },
        ema_price: { price: String(Math.round(prices[id]! * 1e8)), conf: '1000000', expo: -8, publish_time: publishTime() },
        metadata: { slot: 1, proof_available_time: publishTime(), prev_publish_time: publishTime() - 1 },
      }));
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ binary: { encoding: 'hex', data: [] }, parsed }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    setDown: (value: boolean) => (down = value),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
