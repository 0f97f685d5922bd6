import os from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    // Tests drive real git, real test runners and real child processes.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Most of a test's time is spent waiting on those child processes, so two files per core keep
    // the cores busy (on 2 cores: 262 s instead of 474 s for the whole suite).
    maxWorkers: Math.min(8, 2 * os.availableParallelism()),
    setupFiles: ['tests/setup-state-dir.ts'],
  },
});
