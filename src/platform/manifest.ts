import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const PACKAGE_NAME = 'agent-gateway';

interface PackageJson {
  readonly root: string;
  readonly version: string;
}

function readPackageJson(): PackageJson {
  // src/platform/manifest.ts and dist/src/platform/manifest.js sit two and three levels below package.json.
  for (const candidate of ['../..', '../../..']) {
    try {
      const root = resolve(import.meta.dirname, candidate);
      const manifest = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (manifest.name === PACKAGE_NAME && manifest.version) return { root, version: manifest.version };
    } catch {
      // not at this level
    }
  }
  return { root: process.cwd(), version: '0.0.0' };
}

const found = readPackageJson();

/** The gateway's name and version from package.json, as /api/status, MCP and trace resources report them. */
export const APP_MANIFEST: { readonly name: string; readonly version: string } = Object.freeze({ name: PACKAGE_NAME, version: found.version });

/** The directory holding package.json (build outputs such as the trusted-documents manifests are found from it). */
export const PACKAGE_ROOT: string = found.root;
