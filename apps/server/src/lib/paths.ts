import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/**
 * The server runs from source (tsx, vitest) and from the esbuild bundle in dist/; both live
 * under the server package, so walking up to its package.json finds migrations and the
 * console build the same way in every mode.
 */
export function serverRoot(): string {
  if (cached) return cached;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = path.join(dir, 'package.json');
    if (fs.existsSync(pkg) && JSON.parse(fs.readFileSync(pkg, 'utf8')).name === '@callpilot/server') {
      cached = dir;
      return dir;
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('Cannot locate the @callpilot/server package root');
    dir = parent;
  }
}

export const migrationsDir = () => path.join(serverRoot(), 'drizzle');
export const defaultWebDist = () => path.resolve(serverRoot(), '../web/dist');
