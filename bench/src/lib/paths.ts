import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The monorepo root, so benchmarks work whether started from the root or from bench/. */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** The built server bundle, exactly what `npm start` runs in production. */
export const serverEntry = path.join(repoRoot, 'apps/server/dist/main.js');
