import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration tests start real servers and child processes; 2 cores is the target machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // At least two workers, even on two cores (vitest's default there is one): the slowest files
    // (the cluster failover, crash and e2e tests) spend most of their time waiting on child
    // processes and servers, so two files at once take ~210 s where one at a time took ~395 s.
    maxWorkers: Math.max(2, availableParallelism()),
    // One throwaway PostgreSQL for the run (test/support/postgres.ts); each file takes a database.
    globalSetup: ['test/support/postgres.ts'],
    // Every fast-check property under a seed $FC_SEED can give (test/support/fast-check-seed.ts).
    setupFiles: ['test/support/fast-check-seed.ts'],
  },
});
