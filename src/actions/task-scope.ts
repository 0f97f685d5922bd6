import { assertTaskId } from '../tasks/task-id.js';
import { CallerError } from '../errors/errors.js';
import { assertWorkTreeRoot, hasCommit, type BaseCommit } from '../repo/git.js';
import { loadTrustedConfig, type TrustedConfig } from '../repo/trusted-config.js';
import { moveTaskStateAside } from '../records/state-directory.js';
import {
  pinnedBasePath,
  readPinnedBase,
  writePinnedBase,
  type PinnedBase,
} from '../records/pinned-base.js';
import { stateRecordNames } from '../records/mirrored.js';
import { withTaskLock } from '../records/task-lock.js';
import { findTaskFile } from '../repo/tasks.js';

/** The base the task was pinned to and the one resolved now, when they differ. */
export interface BaseMoved {
  pinned: string;
  resolved: string;
}

/** A checked worktree + task id with the configuration trusted for it, evaluated at the pinned base. */
export interface TaskScope extends TrustedConfig {
  worktree: string;
  taskId: string;
  base_moved: BaseMoved | null;
  /** The pin openTask read (absent before the task is pinned): passed down, not read again. */
  pin?: PinnedBase;
}

export async function openRepository(
  worktree: string,
  baseRef?: string,
): Promise<TrustedConfig & { worktree: string }> {
  // The base's resolution reads HEAD, and fails as assertRepository would when there is none.
  await assertWorkTreeRoot(worktree);
  return { worktree, ...(await loadTrustedConfig(worktree, baseRef)) };
}

/**
 * Every tool, prompt and `gate` opens a task here. The first time, the resolved base is pinned in the
 * state directory; afterwards the pinned commit is the base whatever main, the merge-base or base_ref say
 * (a Player moving `main` cannot move it). Only `coachgate task pin-base` re-pins. A task the resolved
 * base does not hold is not pinned (the scope is the resolved base): a lookup of a task not created
 * yet would pin a base that lacks it, and the task, once committed, would be refused for good. Callers
 * that need the task refuse it (loadTask) before they write anything.
 */
export async function openTask(
  worktree: string,
  taskId: string,
  baseRef?: string,
): Promise<TaskScope> {
  assertTaskId(taskId);
  const resolved = await openRepository(worktree, baseRef);
  const pin = (await readPinnedBase(worktree, taskId)) ?? (await pinFirstTime(resolved, taskId));
  if (!pin) return { ...resolved, taskId, base_moved: null };
  if (!(await hasCommit(worktree, pin.commit)))
    throw await lostPin(worktree, taskId, pin, resolved.base);
  return scopeAtPin(resolved, taskId, pin);
}

async function pinFirstTime(
  resolved: TrustedConfig & { worktree: string },
  taskId: string,
): Promise<PinnedBase | undefined> {
  const { worktree, base } = resolved;
  const held = await findTaskFile(worktree, taskId, base.commit).then(
    () => true,
    (error: unknown) => {
      if (error instanceof CallerError) return false;
      throw error;
    },
  );
  if (!held) return undefined;
  return withTaskLock(
    worktree,
    taskId,
    async () =>
      (await readPinnedBase(worktree, taskId)) ??
      (await refuseLostPin(worktree, taskId, base)) ??
      writePinnedBase(worktree, taskId, base, 'server'),
  );
}

/**
 * A task the server already touched, opened without writing anything (no pin, no lock): for read-only
 * views such as the dashboard. Undefined when no base was pinned for it yet.
 */
export async function viewTask(worktree: string, taskId: string): Promise<TaskScope | undefined> {
  assertTaskId(taskId);
  const pin = await readPinnedBase(worktree, taskId);
  return pin && scopeAtPin(await openRepository(worktree), taskId, pin);
}

async function scopeAtPin(
  resolved: TrustedConfig & { worktree: string },
  taskId: string,
  pin: PinnedBase,
): Promise<TaskScope> {
  if (pin.commit === resolved.base.commit) return { ...resolved, taskId, base_moved: null, pin };
  const pinned = await loadTrustedConfig(resolved.worktree, pin.commit);
  return {
    worktree: resolved.worktree,
    ...pinned,
    base: { commit: pin.commit, source: `pinned (${pin.source})` },
    taskId,
    base_moved: { pinned: pin.commit, resolved: resolved.base.commit },
    pin,
  };
}

/**
 * A pin whose commit this repository does not hold. Never re-pinned automatically: whoever can rewrite
 * the repository's history (a Player with a shell) would then choose the base. A person re-pins.
 */
async function lostPin(
  worktree: string,
  taskId: string,
  pin: PinnedBase,
  current: BaseCommit,
): Promise<CallerError> {
  const command = `coachgate task pin-base --task ${taskId} --base ${current.commit} --worktree ${worktree}`;
  const otherRepository = await fromOtherRepository(worktree, pin);
  return new CallerError(
    otherRepository
      ? `${taskId} was pinned to ${pin.commit} in another repository at this path: ${worktree} holds neither that commit nor its root commit ${pin.root_commit} (the repository was re-created).`
      : `${taskId} is pinned to ${pin.commit}, which ${worktree} no longer holds (history rewritten, or the commit pruned).`,
    otherRepository
      ? `If ${taskId} is a new task of this repository, start it afresh on the current base (${current.source}): ${command} — the old repository's records of ${taskId} are moved aside.`
      : `Restore the commit (e.g. git fetch it), or re-pin the task to the current base (${current.source}): ${command}`,
    { pinned_commit: pin.commit, fix_command: command },
  );
}

/**
 * A task without a pin but with records was pinned once and its pin was deleted: pinning it afresh would
 * let whoever deleted it (and moved the base branch) choose what the task is judged against. Only a
 * task with no records at all is new, and pinned on first touch.
 */
async function refuseLostPin(
  worktree: string,
  taskId: string,
  current: BaseCommit,
): Promise<undefined> {
  const records = await stateRecordNames(worktree, taskId);
  if (records.length === 0) return undefined;
  const command = `coachgate task pin-base --task ${taskId} --base ${current.commit} --worktree ${worktree}`;
  throw new CallerError(
    `${taskId}'s pinned base is missing: ${await pinnedBasePath(worktree, taskId)} was deleted, yet the state directory holds ${records.length} record(s) of the task (${records.slice(0, 3).join(', ')}). coachgate does not re-pin a task by itself.`,
    `A person checks which base the task belongs to and re-pins it: ${command} (the current base, ${current.source}, is filled in; use another --base if that is not the task's base).`,
    { fix_command: command },
  );
}

/** True when the repository does not hold the pin's root commit (unknown for pins without one). */
async function fromOtherRepository(worktree: string, pin: PinnedBase): Promise<boolean> {
  return pin.root_commit !== undefined && !(await hasCommit(worktree, pin.root_commit));
}

/**
 * `coachgate task pin-base`: a person moves the task's pinned base (never reachable through MCP). When
 * the old pin came from another repository at this path, the old task's records are moved aside
 * (`<state>/repos/<key>/replaced/`), so the new repository's task starts with no verdicts or strikes.
 */
export async function repinBase(worktree: string, taskId: string, baseRef: string) {
  assertTaskId(taskId);
  const resolved = await openRepository(worktree, baseRef);
  const previous = await readPinnedBase(worktree, taskId);
  const replaced =
    previous && (await fromOtherRepository(worktree, previous))
      ? await moveTaskStateAside(worktree, taskId)
      : null;
  const pin = await withTaskLock(worktree, taskId, () =>
    writePinnedBase(worktree, taskId, resolved.base, 'person'),
  );
  return { previous: previous?.commit ?? null, pinned: pin, records_moved_to: replaced };
}
