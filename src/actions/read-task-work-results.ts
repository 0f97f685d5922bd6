import { stat } from 'node:fs/promises';
import path from 'node:path';
import {
  playerClaims,
  reportedGates,
  claimedFiles,
  TaskWorkResultsSchema,
  type PlayerClaims,
  type ReportedGates,
  type TaskWorkResults,
} from '../tasks/task-work-results.js';
import { MAX_REPORTED_FILES } from '../tasks/player-report.js';
import { resolveFileInWorktree, worktreeRelative } from '../repo/workspace.js';
import { readWorktreeFile } from '../repo/worktree-file.js';
import { assertWorkTreeRoot } from '../repo/git.js';
import { pathExists, readJsonFile } from '../records/files.js';
import { artifactNames, taskDirectory } from '../records/mirror-paths.js';
import { playerTurnNumbers, readPlayerTurn } from '../records/player-turns.js';
import { taskRecordFile } from '../records/mirrored.js';
import { assertTaskId } from '../tasks/task-id.js';

export interface TaskWorkResultsReport {
  found: boolean;
  path: string;
  source: 'task_work_results' | 'player_turn' | 'none';
  results: TaskWorkResults | null;
  reported_gates: ReportedGates;
  claims: PlayerClaims;
  honesty: { verified: boolean; missing_files: string[] };
  problems: string[];
  message: string;
}

/** All lists of one report together (each list alone is bounded by MAX_REPORTED_FILES). */
const MAX_CLAIMED_FILES = 4 * MAX_REPORTED_FILES;

const NO_CLAIMS: PlayerClaims = {
  files_created: [],
  files_modified: [],
  tests_written: [],
  requirements_met: [],
  completion_promises: [],
};

/**
 * The Player's report: `task_work_results.json`, else the latest `player_turn_<N>.json`. Never trusted: every
 * claimed file is checked against the worktree, and a corrupt file is a problem, not an empty report.
 */
export async function readTaskWorkResults(
  worktree: string,
  taskId: string,
): Promise<TaskWorkResultsReport> {
  assertTaskId(taskId);
  // A plain directory or a .git directory has no Player report to read: say what it is instead.
  await assertWorkTreeRoot(worktree);
  const directory = taskDirectory(worktree, taskId);
  const resultsPath = path.join(directory, artifactNames.taskWorkResults);
  let file = await readJsonFile(resultsPath, (target) => readWorktreeFile(worktree, target));
  let source: TaskWorkResultsReport['source'] = 'task_work_results';
  // Whichever the Player wrote last is its current report: an old task_work_results.json must not hide a
  // newer recorded turn (nor the other way round).
  const latest = (await playerTurnNumbers(worktree, taskId)).at(-1);
  if (
    latest !== undefined &&
    (file.state === 'missing' ||
      (await modifiedAt(
        (await taskRecordFile(worktree, taskId, artifactNames.playerTurn(latest))).state,
      )) > (await modifiedAt(resultsPath)))
  ) {
    file = await readPlayerTurn(worktree, taskId, latest);
    source = 'player_turn';
  }
  const shown = worktreeRelative(worktree, file.path);
  if (file.state === 'missing') {
    return empty(
      shown,
      'none',
      [],
      `No Player report for ${taskId}: ${shown} does not exist and no player_turn_<N>.json was recorded.`,
    );
  }
  if (file.state === 'corrupt') {
    return empty(
      shown,
      source,
      [`${shown}: ${file.problem}`],
      `The Player report ${shown} is corrupt: ${file.problem}.`,
    );
  }
  const parsed = TaskWorkResultsSchema.safeParse(file.value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map(
      (issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`,
    );
    return empty(
      shown,
      source,
      issues.map((issue) => `${shown}: ${issue}`),
      `The Player report ${shown} does not have the expected shape: ${issues.slice(0, 3).join('; ')}.`,
    );
  }
  const { claims, problems } = playerClaims(worktree, parsed.data);
  const claimed = claimedFiles(claims);
  // Each list is bounded; promises can add more: the total is bounded too, before any file is checked.
  if (claimed.length > MAX_CLAIMED_FILES)
    return empty(
      shown,
      source,
      [
        `${shown}: claims ${claimed.length} files, over the ${MAX_CLAIMED_FILES} checked per report`,
      ],
      `The Player report ${shown} claims ${claimed.length} files; coachgate checks at most ${MAX_CLAIMED_FILES}. The Player should name the files this turn created or changed, not the whole tree.`,
    );
  const missing = await missingFiles(worktree, claimed);
  return {
    found: true,
    path: shown,
    source,
    results: parsed.data,
    reported_gates: reportedGates(parsed.data),
    claims,
    honesty: { verified: missing.length === 0 && problems.length === 0, missing_files: missing },
    problems,
    message:
      missing.length === 0
        ? `Read ${shown}; every claimed file exists.`
        : `Read ${shown}; ${missing.length} claimed file(s) do not exist.`,
  };
}

function empty(
  file: string,
  source: TaskWorkResultsReport['source'],
  problems: string[],
  message: string,
): TaskWorkResultsReport {
  return {
    found: source !== 'none',
    path: file,
    source,
    results: null,
    reported_gates: {},
    claims: NO_CLAIMS,
    honesty: { verified: false, missing_files: [] },
    problems,
    message,
  };
}

async function missingFiles(worktree: string, files: string[]): Promise<string[]> {
  const missing: string[] = [];
  for (const file of files) {
    const resolved = await resolveFileInWorktree(worktree, file).catch(() => undefined);
    if (!resolved || !(await pathExists(resolved))) missing.push(file);
  }
  return missing;
}

async function modifiedAt(file: string): Promise<number> {
  return stat(file).then(
    (info) => info.mtimeMs,
    () => 0,
  );
}
