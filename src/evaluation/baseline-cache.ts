import { createHash } from 'node:crypto';
import { mirroredCacheFile, readStateCopy, writeMirrored } from '../records/mirrored.js';
import { parseJsonRecord } from '../records/files.js';
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
 * Baselines live in the server's state directory (mirrored beside the runner's baseline cache): a
 * Player who edits the worktree copy changes nothing. The base never changes, so a key is never
 * invalidated.
 */
export async function readBaseline(
  worktree: string,
  key: BaselineKey,
): Promise<BaselineRun | undefined> {
  const file = await cacheFile(worktree, key);
  const parsed = parseJsonRecord<BaselineRun>(file.state, await readStateCopy(file));
  return parsed.state === 'ok' ? parsed.value : undefined;
}

export async function writeBaseline(
  worktree: string,
  key: BaselineKey,
  run: BaselineRun,
): Promise<void> {
  await writeMirrored(await cacheFile(worktree, key), `${JSON.stringify(run, null, 2)}\n`);
}

function cacheFile(worktree: string, key: BaselineKey) {
  const digest = createHash('sha256')
    .update(JSON.stringify([key.baseCommit, key.command, key.environment]))
    .digest('hex')
    .slice(0, 24);
  return mirroredCacheFile(worktree, 'baseline', `evaluation-${digest}`);
}
