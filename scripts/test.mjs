// `npm test`: every check the project has, in the order that fails fastest.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

// The e2e suite drives a real browser; without one it must fail loudly, never skip.
if (!fs.existsSync(chromium)) {
  process.stderr.write(
    `Chromium not found at ${chromium}. Install the Debian package "chromium" (apt-get install -y chromium) or set CHROMIUM_PATH.\n`,
  );
  process.exit(1);
}

const npx = (args) => ['npx', args];
const steps = [
  ['typecheck', ...npx(['tsc', '-p', 'packages/contracts'])],
  ['typecheck', ...npx(['tsc', '-p', 'apps/server'])],
  ['typecheck', ...npx(['tsc', '-p', 'apps/web'])],
  ['typecheck', ...npx(['tsc', '-p', 'e2e'])],
  ['typecheck', ...npx(['tsc', '-p', 'bench'])],
  ['lint', ...npx(['biome', 'check', '.'])],
  ['unit and integration', ...npx(['vitest', 'run'])],
  ['build', 'node', ['scripts/build.mjs']],
  ['end-to-end', ...npx(['vitest', 'run', '--config', 'e2e/vitest.config.ts'])],
];

if (!process.env.TEST_DATABASE_URL) {
  process.stdout.write(
    'TEST_DATABASE_URL is not set: the server suite runs on PGlite only (CI also runs it on PostgreSQL).\n',
  );
}

const started = Date.now();
for (const [label, bin, args] of steps) {
  process.stdout.write(`\n▶ ${label}: ${bin} ${args.join(' ')}\n`);
  const t = Date.now();
  const r = spawnSync(bin, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    process.stderr.write(`\n✖ ${label} failed (${bin} ${args.join(' ')})\n`);
    process.exit(r.status ?? 1);
  }
  process.stdout.write(`✔ ${label} (${((Date.now() - t) / 1000).toFixed(1)} s)\n`);
}
process.stdout.write(`\nAll checks passed in ${((Date.now() - started) / 60000).toFixed(1)} min\n`);
