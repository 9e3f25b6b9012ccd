import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const fromRoot = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  resolve: {
    // Unit tests run against the TypeScript sources, so they never test a stale build.
    alias: [
      { find: /^@webpp\/core$/, replacement: fromRoot('./packages/core/src/index.ts') },
      { find: /^@webpp\/netem\/model$/, replacement: fromRoot('./packages/netem/src/model/index.ts') },
      { find: /^@webpp\/netem$/, replacement: fromRoot('./packages/netem/src/index.ts') },
    ],
  },
  test: {
    include: [
      'packages/*/test/**/*.test.ts',
      'origin/test/**/*.test.ts',
      'sw/test/**/*.test.ts',
      'examples/*/test/**/*.test.ts',
      'e2e/bench/**/*.test.ts',
      'e2e/support/**/*.test.ts',
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
