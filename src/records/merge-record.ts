import { z } from 'zod';
import { SignatureFields } from '../verdicts/verdict-entry.js';
import { signatureProblem, signingKey, signRecord, type TrustedKey } from './keys.js';
import { taskRecordFile, writeMirrored, type MirroredFile } from './mirrored.js';
import { artifactNames } from './mirror-paths.js';
import { withTaskLock } from './task-lock.js';

const COMMIT = z.string().regex(/^[0-9a-f]{40,64}$/);

export const ApprovedFileSchema = z.object({
  path: z.string().min(1).describe('Repository-relative path.'),
  mode: z
    .string()
    .nullable()
    .describe('Its git mode in the approved commit (100644, 100755, 120000); null: deleted.'),
  blob: z.string().nullable().describe('Its git blob id in the approved commit; null: deleted.'),
});

/**
 * What `coachgate worktree finish` merged: the approved commit (the task branch, whose tree the approving
 * run fingerprinted), the merge commit, and the files the task changed against its pinned base with
 * their approved content. Signed, so a gate on the merged branch, in any clone, can check the approval
 * against the approved tree rather than against a worktree that no longer exists.
 */
export const MergeRecordSchema = z
  .object({
    task_id: z.string(),
    run_id: z.string().describe('The approving run.'),
    tree_hash: z
      .string()
      .describe("The approving run's tree fingerprint, equal to the worktree's at the merge."),
    base_commit: COMMIT.describe('The pinned base the task ran against (unmoved at the merge).'),
    base_branch: z.string().describe('The branch the task was merged into.'),
    approved_commit: COMMIT.describe('The task branch commit holding exactly the approved tree.'),
    merge_commit: COMMIT.describe('The merge commit on base_branch; approved_commit is a parent.'),
    approved_files: z
      .array(ApprovedFileSchema)
      .describe(
        'Every file approved_commit changed against base_commit: what the merge brought in.',
      ),
    merged_at: z.string().describe('ISO 8601 time the merge was recorded.'),
    ...SignatureFields,
  })
  .describe('The merge of an approved task (.guardkit/autobuild/<TASK>/merged.json).');

export type MergeRecord = z.infer<typeof MergeRecordSchema>;

export function mergeRecordFile(worktree: string, taskId: string): Promise<MirroredFile> {
  return taskRecordFile(worktree, taskId, artifactNames.mergeRecord);
}

/** Signs the record and stores it in the state directory and the worktree mirror. */
export async function saveMergeRecord(
  worktree: string,
  record: Omit<MergeRecord, 'key_id' | 'signature'>,
): Promise<MergeRecord> {
  const signed = signRecord(MergeRecordSchema.parse(record), await signingKey());
  await withTaskLock(worktree, record.task_id, async () =>
    writeMirrored(
      await mergeRecordFile(worktree, record.task_id),
      `${JSON.stringify(signed, null, 2)}\n`,
    ),
  );
  return signed;
}

/** The record in `text`, or what is wrong with it (unreadable, not a merge record, not signed by `keys`). */
export function parseMergeRecord(
  text: string,
  keys: TrustedKey[],
): { record: MergeRecord } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { problem: `is unreadable: ${(error as Error).message.split('\n')[0]}` };
  }
  const parsed = MergeRecordSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { problem: `is not a merge record: ${issue?.path.join('.')}: ${issue?.message}` };
  }
  const unsigned = signatureProblem(parsed.data, keys);
  return unsigned ? { problem: unsigned } : { record: parsed.data };
}
