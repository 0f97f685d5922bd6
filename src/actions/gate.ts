import path from 'node:path';
import type { GateCheck } from './gate-render.js';
import { readdir, readFile } from 'node:fs/promises';
import type { RunRecord } from '../records/run-record.js';
import { taskState, type TaskState } from '../verdicts/task-state.js';
import type { VerdictLogEntry } from '../verdicts/verdict-entry.js';
import {
  linkIntoStoreReason,
  onlyPreexistingFailures,
  type AcknowledgedChange,
} from '../verdicts/approval-guard.js';
import { linksIntoStore } from '../repo/runner-loaded.js';
import { WORKTREES_DIRECTORY } from '../repo/worktrees.js';
import { pathExists } from '../records/files.js';
import { CONFIG_PATH } from '../repo/trusted-config.js';
import { loadTask } from '../repo/tasks.js';
import {
  existingSigningKey,
  keyOf,
  parsePublicKeys,
  signatureProblem,
  type TrustedKey,
} from '../records/keys.js';
import type { MergeRecord } from '../records/merge-record.js';
import {
  describeTampering,
  mirrorTampering,
  readStateCopy,
  stateRecordNames,
  taskRecordFile,
} from '../records/mirrored.js';
import { coachTurnHeads, verdictsCut, type CoachTurnHead } from '../records/coach-turn-heads.js';
import { artifactNames, taskDirectory } from '../records/mirror-paths.js';
import { logFiles, readAnchoredLog } from '../records/verdict-log.js';
import { gateChecks } from './gate-checks.js';
import {
  approvedTreeReasons,
  describeMerge,
  mergedApproval,
  movedByTheMerge,
  readApprovingRun,
  type CheckedMerge,
  type MergedApproval,
  type ReadRecord,
} from './gate-merge.js';
import type { TaskScope } from './task-scope.js';
import { taskStatus } from './task-status.js';

export interface GateDecision {
  pass: boolean;
  status: string;
  reasons: string[];
  task: Awaited<ReturnType<typeof taskStatus>>;
  /** Graph health, build, typecheck and lint on the current tree (gate-checks.ts). */
  checks: GateCheck[];
  /** Which records were checked and with which keys, e.g. "mirror only, 1 pinned trusted key". */
  verified_with: string;
  /** What the approving verdict accepted besides green tests; null without an approval. */
  approval: ApprovalTerms | null;
  /** The verdict history the gate read and verified (state copy, or the mirror on a fresh clone). */
  verdicts: TaskState & { intact: boolean; untrusted_keys: string[] };
  /** The approving run the gate checked, and whether the tree is still the one it ran on. */
  approving_run: { record: RunRecord; fresh: boolean } | null;
}

/** Base-test changes the Coach acknowledged, and pre-existing failures the approving run may show. */
export interface ApprovalTerms {
  run_id: string | null;
  acknowledged_changes: AcknowledgedChange[];
  preexisting_failures: string[];
  /** Whether the approving run failed with pre-existing failures alone. */
  run_preexisting_only: boolean;
  /** After `worktree finish`: the merge whose approved tree the approval was checked against. */
  merged: MergedApproval | null;
}

/**
 * For hooks and CI: a task passes only when its last verdict is a signed approval, the verdict history is
 * intact and signed, the approving run is signed, passed and still describes the code: before the merge
 * the worktree is the tree the run fingerprinted; after `worktree finish` merged it, the signed merge
 * record names the files the task changed and each must still hold its approved content. With the
 * server's state directory the server's copy is checked (and the mirror compared with it); without it
 * (CI, a fresh clone) the worktree mirror alone is checked against `coachgate.trusted_keys`, else the
 * local key.
 */
export async function gateDecision(scope: TaskScope): Promise<GateDecision> {
  await loadTask(scope.worktree, scope.taskId, scope.base.commit); // an unknown task is a caller mistake
  const reasons: string[] = [];
  const { keys, description } = await verificationKeys(scope);
  const fromState = (await stateRecordNames(scope.worktree, scope.taskId)).includes(
    artifactNames.verdictLog,
  );
  // Gated in the checkout around the task's own worktree: that tree is the one approved (its
  // mirror, there, is the one compared).
  const elsewhere = await ownWorktreeInside(scope);
  if (elsewhere) reasons.push(elsewhere);
  const read: ReadRecord = async (file) =>
    fromState ? readStateCopy(file) : readText(file.mirror);
  const files = await logFiles(scope.worktree, scope.taskId);
  const log = await readAnchoredLog(files, read, fromState ? 'state' : 'mirror', keys);
  if (!log.chain.intact)
    reasons.push(
      `${fromState ? files.log.state : files.log.display} does not verify: ${log.chain.problems.join('; ')}`,
    );
  reasons.push(...verdictsCut(log.entries, await gateCoachTurnHeads(scope, fromState, read)));
  const state = taskState(log.entries);
  const untrusted = untrustedKeys(log.entries, keys);
  if (untrusted.length > 0) reasons.push(untrustedKeyReason(untrusted));
  if (state.status !== 'approved')
    reasons.push(
      `task is ${state.status}${state.block_reason ? ` (${state.block_reason})` : ''}, not approved`,
    );
  const approval = log.entries.filter((entry) => entry.kind === 'verdict').at(-1);
  const terms: ApprovalTerms | null =
    state.status === 'approved' && approval
      ? {
          run_id: approval.run_id ?? null,
          acknowledged_changes: approval.acknowledged_changes ?? [],
          preexisting_failures: approval.preexisting_failures ?? [],
          run_preexisting_only: false,
          merged: null,
        }
      : null;
  let merge: MergeRecord | null = null;
  let approvingRun: GateDecision['approving_run'] = null;
  if (approval && terms) {
    const checked = await approvingRunReasons(scope, approval, keys, read);
    reasons.push(...checked.reasons);
    approvingRun = checked.run;
    terms.run_preexisting_only = checked.preexisting_only;
    merge = checked.merge?.record ?? null;
    terms.merged = checked.merge && mergedApproval(checked.merge.record, checked.merge.changed);
  }
  reasons.push(...(await linksIntoStore(scope.worktree)).map(linkIntoStoreReason));
  if (fromState) {
    reasons.push(
      ...(await mirrorTampering(scope.worktree, scope.taskId)).map(
        (finding) => `the mirror was changed: ${describeTampering(finding)}`,
      ),
    );
  }
  if (scope.base_moved && !(await movedByTheMerge(scope, scope.base_moved, merge)))
    reasons.push(
      `the base moved since the task was pinned (pinned ${scope.base_moved.pinned}, now ${scope.base_moved.resolved})`,
    );
  const checks = await gateChecks(scope);
  reasons.push(
    ...checks.filter((check) => !check.passed).map((check) => `${check.name}: ${check.reason}`),
  );
  return {
    pass: reasons.length === 0,
    status: state.status,
    reasons,
    task: await taskStatus(scope),
    checks,
    approval: terms,
    verdicts: { ...state, intact: log.chain.intact, untrusted_keys: untrusted },
    approving_run: approvingRun,
    verified_with: `${fromState ? "the server's state copy" : `the worktree mirror alone (the server's state directory holds no records of ${scope.taskId} for this checkout)`}, ${description}${merge ? `; ${describeMerge(merge)}` : ''}`,
  };
}

/** Why this checkout is the wrong one to gate, when the task's worktree is inside it. */
async function ownWorktreeInside(scope: TaskScope): Promise<string | null> {
  const own = path.join(scope.worktree, WORKTREES_DIRECTORY, scope.taskId);
  if (!(await pathExists(path.join(own, '.git')))) return null;
  return `${scope.taskId} is worked on in its own worktree, ${own}, not in this checkout: gate it there (coachgate gate --task ${scope.taskId} --worktree ${own}), or merge it first (coachgate worktree finish --task ${scope.taskId})`;
}

async function approvingRunReasons(
  scope: TaskScope,
  approval: VerdictLogEntry,
  keys: TrustedKey[],
  read: ReadRecord,
): Promise<{
  reasons: string[];
  preexisting_only: boolean;
  merge: CheckedMerge | null;
  run: GateDecision['approving_run'];
}> {
  const entry = `verdicts.jsonl seq ${approval.seq} (approve, turn ${approval.turn})`;
  const refused = (reason: string) => ({
    reasons: [reason],
    preexisting_only: false,
    merge: null,
    run: null,
  });
  if (!approval.run_id) return refused(`${entry} names no approving run`);
  const found = await readApprovingRun(scope, approval.run_id, read);
  if ('problem' in found) return refused(found.problem);
  const { run, display } = found;
  const reasons: string[] = [];
  const unsigned = signatureProblem(run, keys);
  if (unsigned) reasons.push(`the approving run ${display} ${unsigned}`);
  // As in the approval guard: a red run made only of failures the base already had is an honest run.
  const preexistingOnly = onlyPreexistingFailures(run, approval.preexisting_failures ?? []);
  if (run.status !== 'passed' && !preexistingOnly)
    reasons.push(`the approving run ${run.run_id} has status ${run.status}`);
  const tree = await approvedTreeReasons(scope, run, keys, read);
  return {
    reasons: [...reasons, ...tree.reasons],
    preexisting_only: preexistingOnly,
    merge: tree.merge,
    run: { record: run, fresh: tree.merge === null && tree.reasons.length === 0 },
  };
}

/** Keys that signed verdicts but are not trusted here (typically: a fresh clone without trusted_keys). */
function untrustedKeys(entries: VerdictLogEntry[], keys: TrustedKey[]): string[] {
  const trusted = new Set(keys.map((key) => key.key_id));
  const signers = entries.flatMap((entry) => (entry.key_id ? [entry.key_id] : []));
  return [...new Set(signers)].filter((id) => !trusted.has(id));
}

function untrustedKeyReason(keyIds: string[]): string {
  return `the verdicts are signed by key ${keyIds.join(', ')}, which this checkout does not trust: pin the Coach's public key (\`coachgate key show\` where it signed) under coachgate.trusted_keys in ${CONFIG_PATH} and commit it`;
}

/** `coachgate.trusted_keys` from the base config when pinned; otherwise the local key, said so. */
async function verificationKeys(
  scope: TaskScope,
): Promise<{ keys: TrustedKey[]; description: string }> {
  const pinned = scope.config.coachgate.trusted_keys;
  if (pinned && pinned.length > 0)
    return {
      keys: parsePublicKeys(pinned),
      description: `signatures checked against ${pinned.length} trusted key(s) pinned in the base config`,
    };
  const local = await existingSigningKey();
  if (!local)
    return {
      keys: [],
      description: 'no coachgate.trusted_keys pinned and no local key: no signature can verify',
    };
  return {
    keys: [keyOf(local)],
    description: `no coachgate.trusted_keys pinned: signatures checked against the local key ${local.key_id}`,
  };
}

/** The coach turn records the gate reads: the server's copies, or on a fresh clone the mirror's. */
async function gateCoachTurnHeads(
  scope: TaskScope,
  fromState: boolean,
  read: ReadRecord,
): Promise<CoachTurnHead[]> {
  const names = fromState
    ? await stateRecordNames(scope.worktree, scope.taskId)
    : await readdir(taskDirectory(scope.worktree, scope.taskId)).catch(() => [] as string[]);
  return coachTurnHeads(
    names,
    (name) => taskRecordFile(scope.worktree, scope.taskId, name),
    read,
    (file) => (fromState ? file.state : file.display),
  );
}

async function readText(file: string): Promise<string | undefined> {
  return readFile(file, 'utf8').catch(() => undefined);
}
