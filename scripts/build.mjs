// Builds the console and the server bundle when their sources are newer than their output.
// `npm start` calls it so a fresh clone or a pull needs no separate build step.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const force = process.argv.includes('--force');
const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);

function newestMtime(entries) {
  let newest = 0;
  const walk = (p) => {
    let st;
    try {
      st = fs.statSync(p);
    } catch {
      return;
    }
    if (st.isDirectory()) {
      for (const name of fs.readdirSync(p)) {
        if (name === 'node_modules' || name === 'dist' || name === '__tests__') continue;
        walk(path.join(p, name));
      }
    } else newest = Math.max(newest, st.mtimeMs);
  };
  for (const e of entries) walk(path.join(root, e));
  return newest;
}

const mtime = (p) => {
  try {
    return fs.statSync(path.join(root, p)).mtimeMs;
  } catch {
    return 0;
  }
};

const shared = ['packages/contracts/src', 'package-lock.json'];
const targets = [
  {
    id: 'web',
    name: 'console (apps/web)',
    output: 'apps/web/dist/index.html',
    inputs: [...shared, 'apps/web/src', 'apps/web/public', 'apps/web/index.html', 'apps/web/vite.config.ts'],
    cmd: ['npx', ['vite', 'build', '--logLevel', 'warn'], 'apps/web'],
  },
  {
    id: 'server',
    name: 'server (apps/server)',
    output: 'apps/server/dist/main.js',
    inputs: [...shared, 'apps/server/src', 'apps/server/build.mjs'],
    cmd: ['node', ['build.mjs'], 'apps/server'],
  },
];

for (const t of targets) {
  if (only && t.id !== only) continue;
  const out = mtime(t.output);
  if (!force && out > 0 && out >= newestMtime(t.inputs)) continue;
  const started = Date.now();
  process.stdout.write(`building ${t.name}...\n`);
  const [bin, args, cwd] = t.cmd;
  // Always a production build: a caller's NODE_ENV (vitest sets `test`) would otherwise make Vite
  // bundle React's development build, which then stays in dist and is served by every later start.
  const r = spawnSync(bin, args, {
    cwd: path.join(root, cwd),
    stdio: 'inherit',
    env: { ...process.env, NODE_ENV: 'production' },
  });
  if (r.status !== 0) {
    process.stderr.write(`build of ${t.name} failed\n`);
    process.exit(r.status ?? 1);
  }
  process.stdout.write(`built ${t.name} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}
