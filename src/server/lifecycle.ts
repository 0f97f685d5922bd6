import { stopTreeRuns } from '../evaluation/early-runs.js';
import { stopQueryProcess } from '../repo/query-process.js';
import { killAllRuns } from '../runner/process-tree.js';

/** What ended the server; signals exit with 128 + the signal number, as shells report them. */
export type StopReason = 'SIGINT' | 'SIGTERM' | 'SIGHUP' | 'stdin closed' | 'transport closed';

const EXIT_CODES: Record<StopReason, number> = {
  SIGINT: 130,
  SIGTERM: 143,
  SIGHUP: 129,
  'stdin closed': 0,
  'transport closed': 0,
};

/**
 * Hosts stop MCP servers with SIGINT/SIGTERM or by closing stdin (Claude Code on exit). Whatever the cause,
 * every running test tree is killed before the process exits, so no test runner or server it started
 * outlives coachgate. Returns the function the transport's close handler calls.
 */
export function stopOnHostExit(log: (line: string) => void): (reason: StopReason) => Promise<void> {
  let stopping: Promise<void> | undefined;
  const stop = (reason: StopReason) =>
    (stopping ??= (async () => {
      // Background trusted runs are stopped too, and given a moment to remove their snapshots.
      const [killed] = await Promise.all([
        killAllRuns().catch(() => 0),
        stopTreeRuns().catch(() => undefined),
      ]);
      log(
        `coachgate: stopping (${reason})${killed > 0 ? `; killed ${killed} running test run(s)` : ''}`,
      );
      stopQueryProcess();
      process.exit(EXIT_CODES[reason]);
    })());
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
    process.on(signal, () => void stop(signal));
  process.stdin.on('end', () => void stop('stdin closed'));
  process.stdin.on('close', () => void stop('stdin closed'));
  return stop;
}
