import { RunRecordSchema, type RunRecord } from '../records/run-record.js';
import { taskState } from '../verdicts/task-state.js';
import { CallerError } from '../errors/errors.js';
import { treeFingerprint } from '../repo/fingerprint.js';
import { changedSince, gitQuery } from '../repo/git.js';
import {
  approvedFiles,
  changedApprovedFiles,
  commitParents,
  isAncestor,
} from '../repo/worktrees.js';
import { localTrustedKeys, signatureProblem, type TrustedKey } from '../records/keys.js';
import {
  mergeRecordFile,
  parseMergeRecord,
  saveMergeRecord,
  type MergeRecord,
} from '../records/merge-record.js';
import { readStateCopy, taskRecordFile, type MirroredFile } from '../records/mirrored.js';
import { artifactNames, isServerWritten } from '../records/mirror-paths.js';
import { parseVerdictLog } from '../records/verdict-log.js';
import { openTask, type BaseMoved, type TaskScope } from './task-scope.js';

/**
 * The gate after `worktree finish`: the merge record that ties the approved commit to the approving
 * run, signed while the worktree still existed, and the checks the gate makes through it on the
 * merged branch (src/actions/gate.ts).
 */

export type ReadRecord = (file: MirroredFile) => Promise<string | undefined>;

export interface MergedApproval {
  merge_commit: string;
  approved_commit: string;
  base_branch: string;
  /** How many files the task changed, each compared with its approved content. */
  approved_files: number;
  /** Those that no longer hold it (the gate fails). */
  changed_files: string[];
}

/** A signed merge record that vouches for the approving run, and the approved files changed since. */
export interface CheckedMerge {
  record: MergeRecord;
  changed: string[];
}

export function mergedApproval(merge: MergeRecord, changed: string[]): MergedApproval {
  return {
    merge_commit: merge.merge_commit,
    approved_commit: merge.approved_commit,
    base_branch: merge.base_branch,
    approved_files: merge.approved_files.length,
    changed_files: changed,
  };
}

export function describeMerge(merge: MergeRecord): string {
  return `after merge ${short(merge.merge_commit)} into ${merge.base_branch}: the ${merge.approved_files.length} file(s) the task changed checked against the approved commit ${short(merge.approved_commit)}`;
}

/**
 * Whether the approving run still describes the code. Before the merge the worktree must be the very
 * tree the run fingerprinted. After `worktree finish` merged the task, that worktree is gone and the
 * branch holds other commits too, so the whole-tree fingerprint cannot match: the signed merge record
 * then names the files the task changed, and each must still hold the content the approved commit gave
 * it. Other files may change (later, unrelated commits); no history is needed (a shallow clone checks
 * the same).
 */
export async function approvedTreeReasons(
  scope: TaskScope,
  run: RunRecord,
  keys: TrustedKey[],
  read: ReadRecord,
): Promise<{ reasons: string[]; merge: CheckedMerge | null }> {
  if (run.tree_hash === (await treeFingerprint(scope.worktree)))
    return { reasons: [], merge: null };
  const stale = `the worktree changed after run ${run.run_id}: the approval no longer describes the code`;
  const file = await mergeRecordFile(scope.worktree, scope.taskId);
  const text = await read(file);
  if (text === undefined) return { reasons: [stale], merge: null };
  const parsed = parseMergeRecord(text, keys);
  const problem =
    'problem' in parsed ? parsed.problem : mergeRecordMismatch(parsed.record, scope.taskId, run);
  // The record is what would vouch for this tree; why it cannot is the reason, not the tree itself.
  if ('problem' in parsed || problem)
    return {
      reasons: [
        `${file.display} ${problem}, so it cannot vouch for this tree (not the one run ${run.run_id} tested)`,
      ],
      merge: null,
    };
  const record = parsed.record;
  const changed = await changedApprovedFiles(scope.worktree, record.approved_files);
  return {
    reasons: changed.length > 0 ? [changedAfterMerge(record, changed)] : [],
    merge: { record, changed },
  };
}

/** Why a signed merge record does not vouch for this task's approving run; null when it does. */
export function mergeRecordMismatch(
  merge: Pick<MergeRecord, 'task_id' | 'run_id' | 'tree_hash'>,
  taskId: string,
  run: Pick<RunRecord, 'run_id' | 'tree_hash'>,
): string | null {
  if (merge.task_id !== taskId) return `records the merge of ${merge.task_id}, not ${taskId}`;
  if (merge.run_id !== run.run_id)
    return `names run ${merge.run_id}, not the approving run ${run.run_id}`;
  if (merge.tree_hash !== run.tree_hash)
    return `records another tree than the approving run ${run.run_id} fingerprinted`;
  return null;
}

const LISTED_FILES = 10;

function changedAfterMerge(merge: MergeRecord, changed: string[]): string {
  const listed = changed.slice(0, LISTED_FILES).join(', ');
  const more = changed.length > LISTED_FILES ? ` and ${changed.length - LISTED_FILES} more` : '';
  return `${listed}${more}: changed since ${merge.task_id} was approved and merged (approved commit ${short(merge.approved_commit)}, merge ${short(merge.merge_commit)}): the approval does not describe this code`;
}

/**
 * After the merge, the base resolved on the base branch (its merge-base with HEAD) is past the pinned
 * base: the task's own merge moved it. That is expected when the merge record was made from this very
 * pin and the resolved base contains the merge. A base that moved any other way (a re-pin, a task
 * branch rebased before the merge, a task merged without `worktree finish`) still fails the gate.
 */
export async function movedByTheMerge(
  scope: TaskScope,
  moved: BaseMoved,
  merge: MergeRecord | null,
): Promise<boolean> {
  return (
    merge !== null &&
    merge.base_commit === moved.pinned &&
    (await isAncestor(scope.worktree, merge.merge_commit, moved.resolved))
  );
}

/**
 * `coachgate worktree finish`, after the merge and before the worktree is removed: signs which commit
 * holds the approved tree, the merge that brought it in and the files it changed, so `coachgate gate`
 * on the merged branch can check the approval. Refuses unless the worktree is still the approving
 * run's tree, that tree is exactly the committed one, and the merge has that commit as a parent.
 */
export async function recordTaskMerge(
  worktree: string,
  taskId: string,
  merged: { commit: string; base_branch: string },
): Promise<MergeRecord> {
  // Not base_moved: the merge just made the approved commit itself the merge-base of HEAD and the base
  // branch. finish's gate refused a moved base before merging; the pin is the base the task ran on.
  const scope = await openTask(worktree, taskId);
  const refuse = (problem: string) =>
    new CallerError(
      `${taskId} was merged (${short(merged.commit)} on ${merged.base_branch}), but its merge record was not written: ${problem}.`,
      `coachgate gate on ${merged.base_branch} fails without it. Find out what changed in ${worktree}; once its gate passes there, finish again.`,
    );
  const keys = await localTrustedKeys();
  const logFile = await taskRecordFile(worktree, taskId, artifactNames.verdictLog);
  const log = parseVerdictLog((await readStateCopy(logFile)) ?? '', keys);
  const approval = log.entries.filter((entry) => entry.kind === 'verdict').at(-1);
  if (!log.chain.intact || taskState(log.entries).status !== 'approved' || !approval?.run_id)
    throw refuse('the task is no longer approved');
  const found = await readApprovingRun(scope, approval.run_id, readStateCopy);
  if ('problem' in found) throw refuse(found.problem);
  const unsigned = signatureProblem(found.run, keys);
  if (unsigned) throw refuse(`the approving run ${found.display} ${unsigned}`);
  if (found.run.tree_hash !== (await treeFingerprint(worktree)))
    throw refuse(`the worktree changed after run ${found.run.run_id}`);
  const approved = (await gitQuery(worktree, ['rev-parse', '--verify', 'HEAD^{commit}'])).trim();
  const uncommitted = (await changedSince(worktree, approved)).filter(
    (file) => !isServerWritten(file),
  );
  if (uncommitted.length > 0)
    throw refuse(`${uncommitted.join(', ')} differ from the committed ${short(approved)}`);
  if (!(await commitParents(worktree, merged.commit)).includes(approved))
    throw refuse(`the merge does not have the approved commit ${short(approved)} as a parent`);
  return saveMergeRecord(worktree, {
    task_id: taskId,
    run_id: found.run.run_id,
    tree_hash: found.run.tree_hash,
    base_commit: scope.base.commit,
    base_branch: merged.base_branch,
    approved_commit: approved,
    merge_commit: merged.commit,
    approved_files: await approvedFiles(worktree, scope.base.commit, approved),
    merged_at: new Date().toISOString(),
  });
}

function short(commit: string): string {
  return commit.slice(0, 12);
}

/** The stored approving run, parsed; or why it cannot be read. Its signature is the caller's to check. */
export async function readApprovingRun(
  scope: TaskScope,
  runId: string,
  read: ReadRecord,
): Promise<{ run: RunRecord; display: string } | { problem: string }> {
  const file = await taskRecordFile(
    scope.worktree,
    scope.taskId,
    `${artifactNames.runsDirectory}/${runId}.json`,
  );
  const text = await read(file);
  if (text === undefined) return { problem: `the approving run ${file.display} is missing` };
  try {
    return { run: RunRecordSchema.parse(JSON.parse(text)), display: file.display };
  } catch (error) {
    return {
      problem: `the approving run ${file.display} is unreadable: ${(error as Error).message.split('\n')[0]}`,
    };
  }
}
