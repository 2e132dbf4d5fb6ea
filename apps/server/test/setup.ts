import { vi } from 'vitest';

/*
 * Every app a test builds compiles a fast-json-stringify serializer for each response schema of
 * each route (lib/serializer.ts): about 0.6 s of CPU per app, more than the rest of building it.
 * The routes build their zod schemas anew per app, but the JSON Schemas are equal, and a
 * compiled serializer is a pure function of its schema and options: the worker compiles each one
 * once. Production builds one app and is not affected.
 */
vi.mock('fast-json-stringify', async (importOriginal) => {
  const real = await importOriginal<typeof import('fast-json-stringify')>();
  const build = real.default;
  const compiled = new Map<string, ReturnType<typeof build>>();
  const memoized = ((schema: Parameters<typeof build>[0], options?: Parameters<typeof build>[1]) => {
    const key = JSON.stringify([schema, options ?? null]);
    let serialize = compiled.get(key);
    if (!serialize) {
      serialize = build(schema, options);
      compiled.set(key, serialize);
    }
    return serialize;
  }) as typeof build;
  return { ...real, default: memoized, build: memoized };
});
