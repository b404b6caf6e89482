import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration tests start real servers and child processes; 2 cores is the target machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // One throwaway PostgreSQL for the run (test/support/postgres.ts); each file takes a database.
    globalSetup: ['test/support/postgres.ts'],
  },
});
