import type { z } from 'zod';
import { StoredEvaluationSchema } from './evaluation-record.js';
import { readStateCopy, taskRecordFile, writeMirrored } from '../records/mirrored.js';
import { artifactNames } from '../records/mirror-paths.js';
import { parseJsonRecord } from '../records/files.js';

/** Kept beside its run as `runs/<run_id>.evaluation.json` (see StoredEvaluationSchema). */
export type StoredEvaluation = z.infer<typeof StoredEvaluationSchema>;

function evaluationFile(worktree: string, taskId: string, runId: string) {
  return taskRecordFile(
    worktree,
    taskId,
    `${artifactNames.runsDirectory}/${runId}.evaluation.json`,
  );
}

/** Written under the task lock, like every task record. */
export async function saveEvaluation(
  worktree: string,
  taskId: string,
  record: StoredEvaluation,
): Promise<void> {
  await writeMirrored(
    await evaluationFile(worktree, taskId, record.run_id),
    `${JSON.stringify(record, null, 2)}\n`,
  );
}

/** The server's copy for a run, or undefined when none was made (or it does not parse). */
export async function readEvaluation(
  worktree: string,
  taskId: string,
  runId: string,
): Promise<StoredEvaluation | undefined> {
  const file = await evaluationFile(worktree, taskId, runId);
  const parsed = parseJsonRecord<unknown>(file.state, await readStateCopy(file));
  if (parsed.state !== 'ok') return undefined;
  const checked = StoredEvaluationSchema.safeParse(parsed.value);
  return checked.success ? checked.data : undefined;
}
