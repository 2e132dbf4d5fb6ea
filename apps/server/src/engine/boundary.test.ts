import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The engine knows nothing of HTTP, tables or the modules: it states what it needs as ports
 * (engine/call/ports.ts, engine/dialer) and the runtime wires the modules' implementations in.
 * Tests and their support files may reach a database; the engine's code may not.
 */
const ENGINE = path.dirname(new URL(import.meta.url).pathname);
const SRC = path.dirname(ENGINE);
const FORBIDDEN_DIRS = ['modules', 'db', 'runtime', 'plugins', 'providers', 'cli'].map((d) =>
  path.join(SRC, d),
);
const FORBIDDEN_FILES = ['app.ts', 'main.ts', 'env.ts'].map((f) => path.join(SRC, f));
const FORBIDDEN_PACKAGES = ['fastify', 'fastify-plugin', 'drizzle-orm', 'pg', '@electric-sql/pglite'];
const isSupport = (file: string) => /\.test\.ts$|test-support\.ts$/.test(file);

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith('.ts') && !isSupport(full) ? [full] : [];
  });
}

/** Every module specifier a file imports or re-exports (static and dynamic). */
function specifiers(text: string): string[] {
  const found: string[] = [];
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"]([^'"]+)['"]/g;
  for (const match of text.matchAll(pattern)) found.push(match[1] as string);
  return found;
}

/** Why an import from `file` crosses the boundary, or null when it does not. */
function crossing(file: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) {
    const pkg = specifier.startsWith('@')
      ? specifier.split('/').slice(0, 2).join('/')
      : specifier.split('/')[0];
    return FORBIDDEN_PACKAGES.includes(pkg as string) ? `package ${pkg}` : null;
  }
  const target = path.resolve(path.dirname(file), specifier);
  for (const dir of FORBIDDEN_DIRS) {
    if (target === dir || target.startsWith(`${dir}${path.sep}`)) return path.relative(SRC, target);
  }
  for (const forbidden of FORBIDDEN_FILES) {
    if (target === forbidden || `${target}.ts` === forbidden) return path.relative(SRC, forbidden);
  }
  return null;
}

describe('engine boundary', () => {
  it('finds a crossing when there is one', () => {
    const file = path.join(ENGINE, 'call', 'example.ts');
    expect(crossing(file, '../../modules/calls/call-repository')).toBe('modules/calls/call-repository');
    expect(crossing(file, '../../db/schema')).toBe('db/schema');
    expect(crossing(file, 'drizzle-orm')).toBe('package drizzle-orm');
    expect(crossing(file, '../clock')).toBeNull();
    expect(
      specifiers(`import { a } from '../../db/schema';\nexport * from "./x";\nawait import('../../app');`),
    ).toEqual(['../../db/schema', './x', '../../app']);
  });

  it('engine code imports nothing from modules/, db/, the runtime or HTTP', () => {
    const files = sources(ENGINE);
    expect(files.length).toBeGreaterThan(20);
    const violations = files.flatMap((file) =>
      specifiers(fs.readFileSync(file, 'utf8'))
        .map((specifier) => ({ specifier, why: crossing(file, specifier) }))
        .filter((v) => v.why)
        .map((v) => `${path.relative(SRC, file)} imports ${v.specifier} (${v.why})`),
    );
    expect(violations).toEqual([]);
  });
});
