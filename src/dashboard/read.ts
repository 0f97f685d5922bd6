/**
 * Reads what the dashboard shows, without writing anything: the server's own copies through the readers
 * every decision uses (signatures and the hash chain verified there), task_status for strikes, stall and
 * tampering, and the task files for the dependency graph. Each task is read in the worktree it runs in,
 * as its own tool calls name it, so its mirror and its tree are the ones its loop writes.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { taskGraph } from '../actions/check-graph-cycles.js';
import { tasksWithRecords } from '../actions/task-records.js';
import { viewTask } from '../actions/task-scope.js';
import { taskStatus } from '../actions/task-status.js';
import { CoachTurnRecordSchema, type CoachTurnRecord } from '../verdicts/coach-turn.js';
import { CallerError } from '../errors/errors.js';
import { assertTaskId } from '../tasks/task-id.js';
import { existingSigningKey, keyOf, signatureProblem, type SigningKey } from '../records/keys.js';
import { mirrorTampering, stateRecordNames } from '../records/mirrored.js';
import { coachTurnNumbers, readCoachTurn } from '../records/coach-turns.js';
import type { JsonFile } from '../records/files.js';
import { playerTurnNumbers, readPlayerTurn } from '../records/player-turns.js';
import { readRun, runsDirectory, storedRunIds } from '../records/runs.js';
import { stateRoot } from '../records/state-directory.js';
import { readVerdictLog } from '../records/verdict-log.js';
import { mergedView } from './merged.js';
import { buildDashboard, type Checked, type Dashboard, type TaskRecords } from './model.js';
import { runInProgress } from './running.js';
import {
  isDirectory,
  repositoryWorktrees,
  worktreeOfTask,
  type RepositoryWorktree,
} from './worktree-list.js';

export async function readDashboard(root: string): Promise<Dashboard> {
  const worktrees = await repositoryWorktrees(root);
  try {
    return await readWorktrees(root, worktrees);
  } catch (error) {
    // A worktree removed while it was read (`worktree finish` merges and removes it): the
    // repository as it is now, not an error page.
    const present = await Promise.all(worktrees.map((worktree) => isDirectory(worktree.path)));
    if (present.every(Boolean)) throw error;
    return readWorktrees(root, await repositoryWorktrees(root));
  }
}

async function readWorktrees(root: string, worktrees: RepositoryWorktree[]): Promise<Dashboard> {
  // Only an existing key: creating one would write, and without one nothing here was signed.
  const key = await existingSigningKey();
  const [graph, ids] = await Promise.all([taskGraph(root), tasksOfWorktrees(worktrees)]);
  const tasks: TaskRecords[] = [];
  for (const id of ids)
    tasks.push(await readTaskRecords(await worktreeOfTask(worktrees, id), id, key));
  return buildDashboard({
    root,
    state_directory: stateRoot(),
    key_id: key?.key_id ?? null,
    generated_at: new Date().toISOString(),
    worktrees,
    graph,
    tasks,
  });
}

/** Tasks of the whole repository: the server's copy is shared, each worktree's mirror is its own. */
async function tasksOfWorktrees(worktrees: RepositoryWorktree[]): Promise<string[]> {
  const lists = await Promise.all(worktrees.map((worktree) => tasksWithRecords(worktree.path)));
  return [...new Set(lists.flat())].sort();
}

async function readTaskRecords(
  place: RepositoryWorktree,
  id: string,
  key: SigningKey | undefined,
): Promise<TaskRecords> {
  const worktree = place.path;
  const running = await runInProgress(worktree, id);
  const empty = {
    id,
    worktree: place,
    running,
    entries: [],
    player_turns: [],
    coach_turns: [],
    runs: [],
  };
  if ((await stateRecordNames(worktree, id)).length === 0) {
    // A task's first run, still going: nothing is stored yet, and nothing is wrong.
    if (running) return { ...empty, signed: false, mirror_tampering: [] };
    // A mirror without a signed copy beside it was written under another state directory (another
    // HOME, another clone's server) or by hand: there is nothing to compare it with, so no tampering.
    return {
      ...empty,
      signed: false,
      problem:
        `No signed records of this task in ${stateRoot()}: only a worktree's mirror has it, and ` +
        'nothing in a mirror alone is shown or checked.',
      mirror_tampering: [],
    };
  }
  const unread = async (problem: string): Promise<TaskRecords> => ({
    ...empty,
    signed: true,
    problem,
    mirror_tampering: await mirrorTampering(worktree, id),
  });
  if (!key)
    return unread(
      'The state directory has no signing key: nothing here was signed by this server.',
    );
  const scope = await viewTask(worktree, id);
  if (!scope)
    return unread(
      'The server has no pinned base for this task: its records cannot be opened as task_status does.',
    );
  let status;
  try {
    status = await taskStatus(scope);
  } catch (error) {
    if (!(error instanceof CallerError)) throw error;
    return unread(error.message);
  }
  const trusted = [keyOf(key)];
  const log = await readVerdictLog(worktree, id);
  const run = status.latest_run;
  const stale = run !== null && 'fresh' in run && !run.fresh;
  return {
    id,
    worktree: place,
    signed: true,
    status,
    running,
    // Only what the gate would check through the merge record: an approval whose tree moved on.
    merged:
      status.status === 'approved' && (stale || status.base_moved)
        ? await mergedView(scope, log.entries, trusted)
        : null,
    mirror_tampering: status.mirror_tampering,
    entries: log.entries.map((entry) => ({
      entry,
      signature_problem: signatureProblem(entry, trusted),
    })),
    player_turns: await readAll(await playerTurnNumbers(worktree, id), (turn) =>
      readPlayerTurn(worktree, id, turn),
    ),
    coach_turns: await readAll(await coachTurnNumbers(worktree, id), async (turn) =>
      coachTurn(await readCoachTurn(worktree, id, turn)),
    ),
    runs: await readAll(await storedRunIds(worktree, id), (runId) => readRun(worktree, id, runId)),
  };
}

async function readAll<K, T>(
  keys: K[],
  read: (key: K) => Promise<JsonFile<T>>,
): Promise<Checked<T>[]> {
  return Promise.all(
    keys.map(async (key) => {
      const file = await read(key);
      if (file.state === 'ok') return { state: 'ok' as const, value: file.value };
      return {
        state: 'problem' as const,
        name: path.basename(file.path),
        problem: file.state === 'corrupt' ? file.problem : 'missing',
      };
    }),
  );
}

function coachTurn(file: JsonFile<unknown>): JsonFile<CoachTurnRecord> {
  if (file.state !== 'ok') return file;
  const parsed = CoachTurnRecordSchema.safeParse(file.value);
  return parsed.success
    ? { state: 'ok', path: file.path, value: parsed.data }
    : { state: 'corrupt', path: file.path, problem: 'not a coach turn record' };
}

/** The most of a run log the page shows: its end, where the runner's summary is. */
export const LOG_TAIL_BYTES = 64 * 1024;

/**
 * The last LOG_TAIL_BYTES of a stored run's log, from the worktree the task runs in. Only runs the
 * server stored (by its own run order) are served, only as regular files, never through a symbolic
 * link planted in the worktree.
 */
export async function readRunLog(
  root: string,
  taskId: string,
  runId: string,
): Promise<{ text: string; truncated: boolean; bytes: number } | undefined> {
  assertTaskId(taskId);
  // The server writes a run's log into the worktree the run ran in, beside that worktree's mirror.
  const worktree = (await worktreeOfTask(await repositoryWorktrees(root), taskId)).path;
  if (!(await storedRunIds(worktree, taskId)).includes(runId)) return undefined;
  const file = path.join(runsDirectory(worktree, taskId), `${runId}.log`);
  const handle = await open(
    file,
    constants.O_RDONLY | constants.O_NOFOLLOW | (constants.O_NONBLOCK ?? 0),
  ).catch(() => undefined);
  if (!handle) return undefined;
  try {
    const info = await handle.stat();
    if (!info.isFile()) return undefined;
    const length = Math.min(info.size, LOG_TAIL_BYTES);
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, info.size - length);
    return {
      text: buffer.subarray(0, bytesRead).toString('utf8'),
      truncated: info.size > length,
      bytes: info.size,
    };
  } finally {
    await handle.close();
  }
}
