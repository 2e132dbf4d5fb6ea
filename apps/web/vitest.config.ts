import { defineConfig, mergeConfig } from 'vitest/config';
import viteConfig from './vite.config.ts';

export default mergeConfig(
  viteConfig,
  defineConfig({
    test: {
      name: 'web',
      environment: 'jsdom',
      include: ['src/**/*.test.{ts,tsx}'],
      setupFiles: ['src/test/setup.ts'],
      restoreMocks: true,
      // A multi-step form walk through antd (Steps, Select, validation) takes a few seconds of CPU
      // on CI's two cores when files run in parallel; 5 s timed out without anything being wrong.
      testTimeout: 20_000,
    },
  }),
);
