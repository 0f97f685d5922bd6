import { createHash } from 'node:crypto';
import path from 'node:path';
import { failingTests } from '../records/run-record.js';
import { withDetachedCheckout } from '../repo/checkout.js';
import { mirroredCacheFile, readStateCopy, writeMirrored } from '../records/mirrored.js';
import { parseJsonRecord } from '../records/files.js';
import { runTests, type TestRunSpec } from './test-run.js';
import type { RunStatus } from './report/types.js';

export interface BaselineResult {
  base_commit: string;
  status: RunStatus;
  failing: string[];
  /** Tests collected at the base, for check_test_integrity's tests_count_dropped. */
  tests_total: number;
  cached: boolean;
}

/**
 * Runs the same command at the base commit in a temporary detached worktree, so failures that were already
 * there are told apart from new ones. Cached per base commit + command: the base never changes.
 */
export async function runBaseline(
  worktree: string,
  baseCommit: string,
  spec: Omit<TestRunSpec, 'cwd' | 'logPath'>,
): Promise<BaselineResult> {
  const key = createHash('sha256')
    .update(JSON.stringify([baseCommit, spec.command, spec.loginShell]))
    .digest('hex')
    .slice(0, 24);
  // The server's own copy is read; the worktree's .baseline-cache is only a mirror (a Player can edit it).
  const cacheFile = await mirroredCacheFile(worktree, 'baseline', key);
  const cached = parseJsonRecord<BaselineResult>(cacheFile.mirror, await readStateCopy(cacheFile));
  if (cached.state === 'ok') return { ...cached.value, cached: true };

  return withDetachedCheckout(worktree, baseCommit, async (checkout) => {
    const run = await runTests({
      ...spec,
      cwd: checkout,
      logPath: path.join(path.dirname(checkout), 'baseline.log'),
    });
    const result: BaselineResult = {
      base_commit: baseCommit,
      status: run.status,
      failing: failingTests(run),
      tests_total: run.counts.total,
      cached: false,
    };
    if (!run.cancelled && !run.timed_out)
      await writeMirrored(cacheFile, `${JSON.stringify(result, null, 2)}\n`);
    return result;
  });
}
