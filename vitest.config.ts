import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * The files that each get a fresh process (vitest's default): those that run the daemon, the
 * signer or a cluster as real processes, kill them and start them again (e2e, cluster,
 * reliability, the model check), where a test's worth is the process boundary and a file's own
 * start-up is a small share of its time; and keys.test.ts, whose vi.mock('node:crypto') takes hold
 * only in a module graph that has not loaded the real node:crypto yet.
 */
const ISOLATED = [
  'test/e2e/**/*.test.ts',
  'test/cluster/**/*.test.ts',
  'test/reliability/**/*.test.ts',
  'test/model/**/*.test.ts',
  'test/support/**/*.test.ts',
  'test/keys/keys.test.ts',
];

export default defineConfig({
  test: {
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
    projects: [
      // vitest runs the projects in the order of their names: the isolated files first, so that
      // the run ends on the shared project's short files, which two workers split evenly.
      { extends: true, test: { name: 'isolated', include: ISOLATED } },
      {
        // The other files (~160) run in-process: they share a worker and its loaded modules, one
        // after another. A fresh process and module graph for each cost about as much CPU as
        // their tests. A file therefore puts back what it changes in the process (timers, spies,
        // environment variables) and takes its own PostgreSQL database; run
        // `npx vitest run --project shared --sequence.shuffle.files --sequence.seed=N` after
        // adding one, to find what an earlier file leaves behind.
        extends: true,
        test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: ISOLATED, isolate: false },
      },
    ],
  },
});
