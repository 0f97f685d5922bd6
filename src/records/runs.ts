import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { RunRecordSchema, type RunRecord } from './run-record.js';
import { localTrustedKeys, signatureProblem, signingKey, signRecord } from './keys.js';
import { taskStateDirectory } from './state-directory.js';
import { readStateCopy, taskRecordFile, writeMirrored } from './mirrored.js';
import { prepareWrite, readJsonFile, writeJsonAtomically, type JsonFile } from './files.js';
import { withTaskLock } from './task-lock.js';
import { artifactNames, taskDirectory } from './mirror-paths.js';

/** Time-sortable and unique: `20261121T160512345Z-3fa9`. */
export function newRunId(now = new Date()): string {
  return `${now.toISOString().replace(/[-:.]/g, '')}-${randomBytes(2).toString('hex')}`;
}

/** The mirror's runs directory (run logs are written there too). */
export function runsDirectory(worktree: string, taskId: string): string {
  return path.join(taskDirectory(worktree, taskId), artifactNames.runsDirectory);
}

/**
 * Where a stored run's output log goes (the mirror's runs/), checked before the run: the runner opens it
 * before the tests start, so a linked runs/ (or any linked directory on the way) is refused now and not
 * a byte is written outside the store.
 */
export async function prepareRunLog(
  worktree: string,
  taskId: string,
  runId: string,
): Promise<string> {
  const log = path.join(runsDirectory(worktree, taskId), `${runId}.log`);
  await prepareWrite(log);
  return log;
}

/** The order the server stored runs in (state only): the latest run is the last id, whatever files are named. */
async function runOrderPath(worktree: string, taskId: string): Promise<string> {
  return path.join(await taskStateDirectory(worktree, taskId), 'run-order.json');
}

export async function storedRunIds(worktree: string, taskId: string): Promise<string[]> {
  const order = await readJsonFile<string[]>(await runOrderPath(worktree, taskId));
  return order.state === 'ok' && Array.isArray(order.value) ? order.value : [];
}

/** Signs the run and stores it in the state directory and the mirror, then appends it to the run order. */
export async function saveRun(
  worktree: string,
  taskId: string,
  run: RunRecord,
): Promise<RunRecord> {
  const signed = signRecord(RunRecordSchema.parse(run), await signingKey());
  await withTaskLock(worktree, taskId, async () => {
    await writeMirrored(
      await taskRecordFile(worktree, taskId, runName(run.run_id)),
      `${JSON.stringify(signed, null, 2)}\n`,
    );
    await writeJsonAtomically(await runOrderPath(worktree, taskId), [
      ...(await storedRunIds(worktree, taskId)),
      run.run_id,
    ]);
  });
  return signed;
}

function runName(runId: string): string {
  return `${artifactNames.runsDirectory}/${runId}.json`;
}

/** One stored run from the server's copy, validated and signature-checked. */
export async function readRun(
  worktree: string,
  taskId: string,
  runId: string,
): Promise<JsonFile<RunRecord>> {
  const file = await taskRecordFile(worktree, taskId, runName(runId));
  const text = await readStateCopy(file);
  if (text === undefined) return { state: 'missing', path: file.mirror };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return {
      state: 'corrupt',
      path: file.mirror,
      problem: `invalid JSON: ${(error as Error).message}`,
    };
  }
  const parsed = RunRecordSchema.safeParse(value);
  if (!parsed.success)
    return {
      state: 'corrupt',
      path: file.mirror,
      problem: `not a run record: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`,
    };
  const unsigned = signatureProblem(parsed.data, await localTrustedKeys());
  return unsigned
    ? { state: 'corrupt', path: file.mirror, problem: `run ${runId} ${unsigned}` }
    : { state: 'ok', path: file.mirror, value: parsed.data };
}

/** The most recent run the server stored for a task (by its own order, not by file name). */
export async function latestRun(worktree: string, taskId: string): Promise<JsonFile<RunRecord>> {
  const latest = (await storedRunIds(worktree, taskId)).at(-1);
  if (!latest) return { state: 'missing', path: runsDirectory(worktree, taskId) };
  return readRun(worktree, taskId, latest);
}
