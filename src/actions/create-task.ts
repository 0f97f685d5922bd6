import { rm } from 'node:fs/promises';
import path from 'node:path';
import { CallerError } from '../errors/errors.js';
import type { NewTask } from '../tasks/task-template.js';
import { assertWorkTreeRoot, git } from '../repo/git.js';
import { prepareNewTask, writePreparedTask } from '../repo/new-task.js';
import { readPinnedBase, type PinnedBase } from '../records/pinned-base.js';
import { findTaskFile } from '../repo/tasks.js';
import { openRepository, openTask } from './task-scope.js';

export interface CreatedTask {
  id: string;
  path: string;
  /** The commit that added the task file; null with `commit: false`. */
  commit: string | null;
  /** The base the task is pinned to, or null with the reason it is not pinned yet. */
  pinned_base: string | null;
  not_pinned?: string;
  /** The ignore rule the task file matched (`.gitignore:1:*`): it was committed with `git add -f`. */
  force_added?: string;
}

/**
 * `coachgate task new`: writes the task file, commits it (that file only) and pins the base that holds
 * it, so a `main` moved before any tool opens the task cannot choose the task's base. Everything that can
 * refuse (a missing directory, an invalid committed config, an unknown dependency, an id already pinned)
 * is checked before the file is written: a refused command leaves the repository as it was.
 */
export async function createTask(
  worktree: string,
  task: Omit<NewTask, 'id'> & { id?: string },
  options: { commit: boolean; baseRef?: string },
): Promise<CreatedTask> {
  if (options.commit) await openRepository(worktree, options.baseRef);
  else await assertWorkTreeRoot(worktree);
  const prepared = await prepareNewTask(worktree, task);
  const oldPin = await readPinnedBase(worktree, prepared.id);
  if (oldPin && options.commit) throw pinnedBefore(worktree, prepared.id, oldPin);
  await writePreparedTask(worktree, prepared);
  const written = { id: prepared.id, path: prepared.path };
  if (!options.commit)
    return {
      ...written,
      commit: null,
      pinned_base: null,
      not_pinned: oldPin
        ? `not committed (--no-commit), and ${written.id} has an older pin (${oldPin.commit.slice(0, 12)}); once committed, re-pin it: ${repinCommand(worktree, written.id)}`
        : 'not committed (--no-commit): it is pinned when its worktree starts or a tool first opens it',
    };
  const { commit, ignoredBy } = await commitTaskFile(
    worktree,
    written.path,
    `${written.id}: add task ${task.title}`,
  );
  const forced = ignoredBy ? { force_added: ignoredBy } : {};
  const repo = await openRepository(worktree, options.baseRef);
  const atBase = await findTaskFile(worktree, written.id, repo.base.commit).then(
    () => true,
    () => false,
  );
  if (!atBase)
    return {
      ...written,
      commit,
      ...forced,
      pinned_base: null,
      not_pinned: `the base (${repo.base.source}, ${repo.base.commit.slice(0, 12)}) does not contain the new commit: merge it into the base branch; the task is pinned when its worktree starts or a tool first opens it`,
    };
  const scope = await openTask(worktree, written.id, options.baseRef);
  return { ...written, commit, ...forced, pinned_base: scope.base.commit };
}

function repinCommand(worktree: string, taskId: string): string {
  return `coachgate task pin-base --task ${taskId} --base HEAD --worktree ${worktree}`;
}

/**
 * An id pinned before its task file exists (an earlier task of that id, or a lookup by an older
 * version): the new task would be judged against a base that lacks it, so nothing is written.
 */
function pinnedBefore(worktree: string, taskId: string, pin: PinnedBase): CallerError {
  return new CallerError(
    `${taskId} is already pinned to ${pin.commit} (by ${pin.pinned_by}, ${pin.pinned_at}), a base without this new task: nothing was written.`,
    `Pick another --id; or, if that pin is a leftover, write the task with --no-commit, commit it, then re-pin: ${repinCommand(worktree, taskId)}`,
    { pinned_commit: pin.commit },
  );
}

/**
 * Commits exactly `file` (other staged changes stay staged), without running the repository's hooks.
 * A task file the repository ignores (a whitelist .gitignore: `*` then `!src/`) is added with
 * `git add -f`, since the server reads tasks from the base commit; the rule it matched is returned.
 */
async function commitTaskFile(
  worktree: string,
  file: string,
  message: string,
): Promise<{ commit: string; ignoredBy?: string }> {
  const identity = (
    await git(worktree)
      .raw(['config', 'user.email'])
      .catch(() => '')
  ).trim()
    ? []
    : ['user.name=coachgate', 'user.email=coachgate@localhost'];
  const repo = git(worktree, identity);
  const ignoredBy = await ignoreRule(worktree, file);
  try {
    await repo.raw(['add', ...(ignoredBy ? ['-f'] : []), '--', file]);
    await repo.raw(['commit', '-q', '--no-verify', '-m', message, '--only', '--', file]);
  } catch (error) {
    // Left as it was: the file unstaged and removed, so a retry does not meet "already exists".
    await repo.raw(['reset', '-q', '--', file]).catch(() => undefined);
    await rm(path.join(worktree, file), { force: true });
    throw new CallerError(
      `Could not commit ${file}: ${(error as Error).message.trim().replace(/\.$/, '')}. Nothing was written.`,
      'Fix that and run task new again, or pass --no-commit to write the file only.',
    );
  }
  const commit = (await repo.revparse(['HEAD'])).trim();
  return ignoredBy ? { commit, ignoredBy } : { commit };
}

/** The rule ignoring `file` (`.gitignore:1:*`, git's own answer), or undefined when none does. */
async function ignoreRule(worktree: string, file: string): Promise<string | undefined> {
  const answer = await git(worktree)
    .raw(['check-ignore', '--verbose', '--no-index', '--', file])
    .catch(() => '');
  // `<source>:<line>:<pattern>\t<path>`; a `!` pattern is a rule that un-ignores.
  const rule = answer.split('\t')[0]?.trim();
  return rule && !/^[^:]*:\d+:!/.test(rule) ? rule : undefined;
}
