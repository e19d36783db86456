import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    // suites that start processes or talk to databases need more than the default 5 s on a loaded 2-core machine; the
    // suite must pass beside another run of itself (load average 5 and more), where a process start alone can take
    // 20 s: a deadline is there to end a hang, never to time the code (that is the benchmark's job)
    testTimeout: 90_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // two files at a time on the 2-core machines the suite runs on (Vitest's default is one fewer than the cores): most
    // of a file's time is spent waiting on databases, child processes and timers, not on a core
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: { name: 'tessera', include: ['test/**/*.test.ts', 'client/test/**/*.test.ts'] },
      },
      {
        // BASE_PATH (docs/api.md §1.1): the HTTP conventions and the specification's suites again, against services
        // that serve every route under /api (test/support/test-service.ts puts the tests' paths under it)
        extends: true,
        test: {
          name: 'base-path',
          include: ['test/http/**/*.test.ts', 'test/spec/**/*.test.ts'],
          env: { TEST_BASE_PATH: '/api' },
        },
      },
    ],
  },
})
