import { defineConfig } from 'vitest/config'

/** The files of the project `alone` (below), which no other file runs beside. */
const ALONE = ['test/hostile/pipelining.test.ts']

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    // suites that start processes or talk to databases need more than the default 5 s on a loaded 2-core machine
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // two files at a time on the 2-core machines the suite runs on (Vitest's default is one fewer than the cores): most
    // of a file's time is spent waiting on databases, child processes and timers, not on a core
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'tessera',
          include: ['test/**/*.test.ts', 'client/test/**/*.test.ts'],
          exclude: ALONE,
          sequence: { groupOrder: 0 },
        },
      },
      {
        // BASE_PATH (docs/api.md §1.1): the HTTP conventions and the specification's suites again, against services
        // that serve every route under /api (test/support/test-service.ts puts the tests' paths under it)
        extends: true,
        test: {
          name: 'base-path',
          include: ['test/http/**/*.test.ts', 'test/spec/**/*.test.ts'],
          env: { TEST_BASE_PATH: '/api' },
          sequence: { groupOrder: 0 },
        },
      },
      {
        // tests that time the service under a flood (a p99 bound of docs/api.md R8.8): run after every other file,
        // one at a time, so that the latency they measure is the flood's and not another suite's load on a 2-core
        // machine (the pipelining test once measured 1.1 s beside another file, 0.1 s alone)
        extends: true,
        test: { name: 'alone', include: ALONE, fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
})
