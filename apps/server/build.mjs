import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.dirname(fileURLToPath(import.meta.url));
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
// Workspace packages ship TypeScript source, so they are bundled; registry packages stay
// external and load from node_modules as usual.
const external = Object.keys(pkg.dependencies).filter((name) => !name.startsWith('@callpilot/'));

await build({
  absWorkingDir: root,
  entryPoints: {
    main: 'src/main.ts',
    admin: 'src/cli/admin.ts',
    // Loaded by engine/telephony/media/media-engine.ts as a worker thread, next to main.js.
    'media-worker': 'src/engine/telephony/media/media-worker.ts',
  },
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  sourcemap: true,
  external,
  logLevel: 'warning',
  banner: {
    // Some dependencies still call require(); give the ESM bundle one.
    js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
  },
});
