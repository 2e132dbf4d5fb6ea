import { defineConfig } from 'vitest/config';

const serverProject = (name: string, db: 'pglite' | 'pg') => ({
  test: {
    name,
    root: './apps/server',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    environment: 'node',
    globalSetup: ['./test/global-setup.ts'],
    env: { TEST_DB: db },
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});

/** Every unit and integration suite; the e2e suite has its own config (e2e/vitest.config.ts). */
export default defineConfig({
  test: {
    projects: [
      { test: { name: 'contracts', root: './packages/contracts', include: ['src/**/*.test.ts'] } },
      './apps/web/vitest.config.ts',
      serverProject('server', 'pglite'),
      // The same server suite again on a real PostgreSQL when one is provided (CI does).
      ...(process.env.TEST_DATABASE_URL ? [serverProject('server-pg', 'pg')] : []),
    ],
  },
});
