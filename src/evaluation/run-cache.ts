import { createHash } from 'node:crypto';
import path from 'node:path';
import { mirroredCacheFile, readStateCopy, writeMirrored } from '../records/mirrored.js';
import { parseJsonRecord, readJsonFile, writeJsonAtomically } from '../records/files.js';
import { ensurePrivateDirectory, taskStateDirectory } from '../records/state-directory.js';
import type { RunStatus, TestCaseResult } from '../runner/report/types.js';

/**
 * Trusted runs whose inputs a later turn often leaves unchanged, kept in the server's state directory
 * so a Player who edits the worktree changes nothing: the baseline, and the fail-to-pass run.
 */

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

/** The Player's tests on the base code. */
export interface FailToPassRun {
  status: RunStatus;
  tests: TestCaseResult[];
  /** The test files the run was limited to; absent: the whole suite ran. */
  limited_to?: string[];
}

export interface FailToPassKey extends BaselineKey {
  /** The digest of the Player's test-side files as laid into the run's snapshot. */
  tests: string;
}

/**
 * Baselines are mirrored beside the runner's baseline cache (GuardKit's `.baseline-cache`). The base
 * never changes, so a key is never invalidated.
 */
export async function readBaseline(
  worktree: string,
  key: BaselineKey,
): Promise<BaselineRun | undefined> {
  const file = await baselineFile(worktree, key);
  const parsed = parseJsonRecord<BaselineRun>(file.state, await readStateCopy(file));
  return parsed.state === 'ok' ? parsed.value : undefined;
}

export async function writeBaseline(
  worktree: string,
  key: BaselineKey,
  run: BaselineRun,
): Promise<void> {
  await writeMirrored(await baselineFile(worktree, key), `${JSON.stringify(run, null, 2)}\n`);
}

/**
 * A task's latest fail-to-pass run, one entry per task (`tasks/<TASK>/fail-to-pass.json`, not
 * mirrored: it is no GuardKit record), reused while its key is unchanged. A Coach's next turn most
 * often changes the code and not the tests, and then no runner starts for it.
 */
export async function readFailToPass(
  worktree: string,
  taskId: string,
  key: FailToPassKey,
): Promise<FailToPassRun | undefined> {
  const read = await readJsonFile<FailToPassRun & { key: string }>(
    await failToPassFile(worktree, taskId),
  );
  if (read.state !== 'ok') return undefined;
  const { key: stored, ...run } = read.value;
  return stored === keyDigest(key) ? run : undefined;
}

export async function writeFailToPass(
  worktree: string,
  taskId: string,
  key: FailToPassKey,
  run: FailToPassRun,
): Promise<void> {
  const file = await failToPassFile(worktree, taskId);
  await ensurePrivateDirectory(path.dirname(file));
  await writeJsonAtomically(file, { key: keyDigest(key), ...run });
}

function baselineFile(worktree: string, key: BaselineKey) {
  return mirroredCacheFile(worktree, 'baseline', `evaluation-${keyDigest(key).slice(0, 24)}`);
}

async function failToPassFile(worktree: string, taskId: string): Promise<string> {
  return path.join(await taskStateDirectory(worktree, taskId), 'fail-to-pass.json');
}

/** A baseline key hashes as it always has, so the entries cached before the fail-to-pass key stay. */
function keyDigest(key: BaselineKey | FailToPassKey): string {
  const parts = [key.baseCommit, key.command, key.environment];
  if ('tests' in key) parts.push(key.tests);
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}
