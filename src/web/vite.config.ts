import { resolve } from 'node:path';
import { defineConfig } from 'vite';

// The pages the server serves: /browse (the tool directory), /console (an agent's console), /prices, and the
// GraphQL explorer at /graphql.
// Everything is bundled locally: the pages load nothing from any other host.
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  build: {
    outDir: resolve(import.meta.dirname, '../../dist/web'),
    emptyOutDir: true,
    assetsDir: 'assets',
    chunkSizeWarningLimit: 4096,
    rollupOptions: {
      input: {
        browse: resolve(import.meta.dirname, 'browse.html'),
        console: resolve(import.meta.dirname, 'console.html'),
        explorer: resolve(import.meta.dirname, 'explorer.html'),
        prices: resolve(import.meta.dirname, 'prices.html'),
      },
    },
  },
});
