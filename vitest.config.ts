import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'client/test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // suites that start processes or talk to databases need more than the default 5 s on a loaded 2-core machine
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
})
