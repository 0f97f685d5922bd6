import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Puts the interpreter a version manager's shim resolves to (pyenv, asdf: `python3` is a shell script
 * that works out the version on every start) first on PATH, once per vitest run. The shim costs about
 * 0.55 s of CPU per start (39 processes), and the integration project starts python3 and pytest some
 * 400 times; the same interpreter is found directly instead, as in an activated virtualenv. The
 * workers and the servers they start inherit PATH.
 */
function skipPythonShims(): void {
  const onPath = (process.env.PATH ?? '').split(path.delimiter);
  const shim = onPath.find((dir) => /[/\\]shims$/.test(dir));
  if (!shim) return;
  try {
    const executable = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    const real = path.dirname(executable);
    if (executable && real !== shim)
      process.env.PATH = [real, ...onPath.filter((dir) => dir !== real)].join(path.delimiter);
  } catch {
    // No python3: the tests that need it skip themselves.
  }
}
skipPythonShims();

/**
 * Where the machine sets NODE_EXTRA_CA_CERTS (here, to the system's 220 KB bundle, for a TLS proxy),
 * every node start parses that bundle: about 90 ms of CPU, five times a bare start, and the suite
 * starts some 2,000 node processes (servers, agents, the test projects' runners) that never open a
 * TLS connection. It is kept aside for the few that download (tests/helpers/network.ts).
 */
function setExtraCaCertsAside(): void {
  const bundle = process.env.NODE_EXTRA_CA_CERTS;
  if (!bundle) return;
  process.env.COACHGATE_TEST_EXTRA_CA_CERTS = bundle;
  delete process.env.NODE_EXTRA_CA_CERTS;
}
setExtraCaCertsAside();

/**
 * The slow real-runner tests (trusted evaluations, the loop CLIs, runners' reports, run_independent_tests
 * through every runner, the sandbox's attack payloads, the dashboard in a real browser): `npm run test:integration`, which CI runs too. They are matched by folder and
 * name, so a new test in those places lands here without a list to keep.
 */
const INTEGRATION = [
  'tests/evaluation/**/*.test.ts',
  'tests/gates/**/*.test.ts',
  'tests/runner/report-*.test.ts',
  'tests/tools/run-independent-tests*.test.ts',
  'tests/sandbox/attacks.test.ts',
  // Approvals evaluated for real (candidate, trusted, fail-to-pass and new-tests runs) many times over.
  'tests/records/forgery.test.ts',
  'tests/tools/record-verdict.test.ts',
  'tests/dashboard/dashboard.test.ts',
  // Installs the runners the files above use, when absent.
  'tests/runner/pinned-runners.test.ts',
];

/**
 * Seconds each slow file took in a whole CI run (tests/file-durations.json: files of 5 s or more).
 * Without vitest's own cache (a clean clone has none) files start largest first, so a long file that
 * is small on disk started late and ran alone at the end while the other workers sat idle: in one
 * CI run the last 100 s of `npm run test:all` left the cores 70-99 % idle. The slowest start first;
 * the rest keep vitest's order. A stale figure only changes the order, never what runs.
 */
const FILE_SECONDS: Record<string, number> = JSON.parse(
  readFileSync(new URL('./tests/file-durations.json', import.meta.url), 'utf8'),
);

class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = (file: TestSpecification) =>
      FILE_SECONDS[path.relative(process.cwd(), file.moduleId)] ?? 0;
    // Array sort is stable: files with no figure stay in the order vitest chose.
    return (await super.sort(files)).sort((a, b) => seconds(b) - seconds(a));
  }
}

export default defineConfig({
  test: {
    sequence: { sequencer: SlowestFirst },
    // Tests drive real git, real test runners and real child processes. The bound catches a hang; it is
    // sized for a busy machine (a shared two-core one stretched 20-second files past 60 s), since a
    // test must not fail because the machine is slow.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // Most of a test's time is spent waiting on those child processes, so two files per core keep
    // the cores busy (on 2 cores: 262 s instead of 474 s for the whole suite).
    maxWorkers: Math.min(8, 2 * os.availableParallelism()),
    // Files share their worker process; setup files still run before each file, so each has its
    // own state directory and runner environment. A fresh process per file (vitest's default) cost
    // the unit project a third of its CPU (172 s against 113 s) and eight integration files 14 % of
    // their wall time (85.6 s against 73.5 s), on two cores.
    isolate: false,
    setupFiles: ['tests/setup-state-dir.ts', 'tests/setup-runner-environment.ts'],
    globalSetup: ['tests/global-dev-null-guard.ts'],
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['tests/**/*.test.ts'], exclude: INTEGRATION },
      },
      {
        extends: true,
        // Each test here runs whole suites, sometimes three times (an approval's trusted runs):
        // sized for a busy two-core machine rather than an idle one.
        test: {
          name: 'integration',
          include: INTEGRATION,
          testTimeout: 240_000,
          hookTimeout: 240_000,
        },
      },
    ],
  },
});
