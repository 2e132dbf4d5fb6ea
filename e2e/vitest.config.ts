import { defineConfig } from 'vitest/config';

/** Browser and process tests against the real built server; run after `node scripts/build.mjs`. */
export default defineConfig({
  test: {
    name: 'e2e',
    root: import.meta.dirname,
    include: ['tests/**/*.test.ts'],
    globalSetup: ['./support/global-setup.ts'],
    setupFiles: ['./support/setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // One Chromium and a few servers at a time is what two cores carry without timing noise.
    fileParallelism: false,
  },
});
