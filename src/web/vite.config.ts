import { relative, resolve } from 'node:path';
import { defineConfig, type Plugin } from 'vite';

const REPOSITORY = resolve(import.meta.dirname, '../..');

/**
 * Writes `.inputs.json` next to the pages: the repository files outside src/web this build bundled
 * (a module's browser.ts, say). scripts/build.ts hashes them with src/web to tell whether the pages
 * must be built again; dependencies under node_modules are covered by package-lock.json.
 */
function recordInputs(): Plugin {
  return {
    name: 'gateway:record-inputs',
    apply: 'build',
    generateBundle() {
      const outside = [...this.getModuleIds()]
        .filter((id) => !id.startsWith('\0'))
        .map((id) => id.split('?')[0]!)
        .filter((id) => id.startsWith(`${REPOSITORY}/`) && !id.includes('/node_modules/') && !id.startsWith(`${import.meta.dirname}/`))
        .map((id) => relative(REPOSITORY, id));
      this.emitFile({ type: 'asset', fileName: '.inputs.json', source: JSON.stringify([...new Set(outside)].sort()) });
    },
  };
}

// The pages the server serves: / (the front page), /browse (the tool directory), /console (an agent's console), /prices, and the
// GraphQL explorer at /graphql.
// Everything is bundled locally: the pages load nothing from any other host. public/ (the icons) is copied as it is.
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  plugins: [recordInputs()],
  build: {
    outDir: resolve(REPOSITORY, 'dist/web'),
    emptyOutDir: true,
    assetsDir: 'assets',
    chunkSizeWarningLimit: 4096,
    rollupOptions: {
      input: {
        index: resolve(import.meta.dirname, 'index.html'),
        browse: resolve(import.meta.dirname, 'browse.html'),
        console: resolve(import.meta.dirname, 'console.html'),
        explorer: resolve(import.meta.dirname, 'explorer.html'),
        prices: resolve(import.meta.dirname, 'prices.html'),
      },
    },
  },
});
