import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const PACKAGE_NAME = 'agent-gateway';

/** The gateway's name and version from package.json, as /api/status, MCP and trace resources report them. */
export const APP_MANIFEST: { readonly name: string; readonly version: string } = Object.freeze({ name: PACKAGE_NAME, version: readPackageVersion() });

function readPackageVersion(): string {
  // src/platform/manifest.ts and dist/src/platform/manifest.js sit two and three levels below package.json.
  for (const candidate of ['../../package.json', '../../../package.json']) {
    try {
      const manifest = JSON.parse(readFileSync(resolve(import.meta.dirname, candidate), 'utf8')) as { name?: string; version?: string };
      if (manifest.name === PACKAGE_NAME && manifest.version) return manifest.version;
    } catch {
      // not at this level
    }
  }
  return '0.0.0';
}
