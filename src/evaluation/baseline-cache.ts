import { createHash } from 'node:crypto';
import path from 'node:path';
import { readJsonFile, writeJsonAtomically } from '../store/files.js';
import { taskDirectory } from '../store/paths.js';
import type { RunStatus, TestCaseResult } from '../runner/report/types.js';

/** The base's tests on the base's code: what PASS_TO_PASS compares the trusted run against. */
export interface BaselineRun {
  base_commit: string;
  status: RunStatus;
  tests: TestCaseResult[];
}

export interface BaselineKey {
  baseCommit: string;
  command: unknown;
  /** Anything in the borrowed environment that can change a result: interpreter, runtime versions. */
  environment: unknown;
}

/**
 * The one place baselines are stored: under the task's store directory for now; the server-held state
 * directory replaces it by swapping this module. The base never changes, so a key is never invalidated.
 */
export async function readBaseline(worktree: string, taskId: string, key: BaselineKey): Promise<BaselineRun | undefined> {
  const cached = await readJsonFile<BaselineRun>(cacheFile(worktree, taskId, key));
  return cached.state === 'ok' ? cached.value : undefined;
}

export async function writeBaseline(worktree: string, taskId: string, key: BaselineKey, run: BaselineRun): Promise<void> {
  await writeJsonAtomically(cacheFile(worktree, taskId, key), run);
}

function cacheFile(worktree: string, taskId: string, key: BaselineKey): string {
  const digest = createHash('sha256').update(JSON.stringify([key.baseCommit, key.command, key.environment])).digest('hex').slice(0, 24);
  return path.join(taskDirectory(worktree, taskId), 'baselines', `${digest}.json`);
}
