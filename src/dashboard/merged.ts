/**
 * After `worktree finish` the approving run's tree is gone (the merged branch holds other commits too),
 * so the latest run reads as stale and the base as moved. The gate then checks the approval through the
 * signed merge record (src/actions/gate-merge.ts); the page asks the same question the same way, so it
 * never calls stale what the gate passes.
 */
import {
  approvedTreeReasons,
  mergedApproval,
  movedByTheMerge,
  readApprovingRun,
  type MergedApproval,
} from '../actions/gate-merge.js';
import type { TaskScope } from '../actions/task-scope.js';
import type { VerdictLogEntry } from '../verdicts/verdict-entry.js';
import type { TrustedKey } from '../records/keys.js';
import { readStateCopy } from '../records/mirrored.js';

export interface MergedView extends MergedApproval {
  /** Whether the base moved only by this merge (as the gate accepts it). */
  base_moved_by_merge: boolean;
}

/** The approval's signed merge record, checked as the gate checks it; null when there is none. */
export async function mergedView(
  scope: TaskScope,
  entries: VerdictLogEntry[],
  keys: TrustedKey[],
): Promise<MergedView | null> {
  const approval = entries.filter((entry) => entry.kind === 'verdict').at(-1);
  if (approval?.decision !== 'approve' || !approval.run_id) return null;
  const found = await readApprovingRun(scope, approval.run_id, readStateCopy);
  if ('problem' in found) return null;
  const { merge } = await approvedTreeReasons(scope, found.run, keys, readStateCopy);
  if (!merge) return null;
  return {
    ...mergedApproval(merge.record, merge.changed),
    base_moved_by_merge:
      scope.base_moved !== null && (await movedByTheMerge(scope, scope.base_moved, merge.record)),
  };
}
