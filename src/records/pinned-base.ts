import path from 'node:path';
import { z } from 'zod';
import { readJsonFile, writeJsonAtomically } from './files.js';
import { rootCommit, type BaseCommit } from '../repo/git.js';
import { startUpSurfaces } from '../repo/runner-loaded.js';
import { ensurePrivateDirectory, taskStateDirectory } from './state-directory.js';

export const PinnedBaseSchema = z
  .object({
    commit: z.string().regex(/^[0-9a-f]{40,64}$/),
    source: z.string().describe('How the base was resolved when it was pinned.'),
    pinned_at: z.string(),
    pinned_by: z
      .enum(['server', 'person'])
      .describe(
        '"server": when the task was created (task new), its worktree started, or first opened; "person": coachgate task pin-base.',
      ),
    root_commit: z
      .string()
      .regex(/^[0-9a-f]{40,64}$/)
      .optional()
      .describe(
        "The pinned commit's root commit: which repository the pin belongs to (absent in older pins).",
      ),
    environment: z
      .record(z.string(), z.string())
      .optional()
      .describe(
        "The borrowed environment's start-up surfaces when the base was pinned: worktree-relative path (a virtualenv's site hooks and interpreter, pytest plugin distributions' entry_points.txt and RECORD) to its fingerprint (`sha256:<hex>`, or `link:<target>`). One added or changed since is refused as planted. Absent in older pins.",
      ),
  })
  .describe(
    'The base commit a task is evaluated against, kept in the state directory (pinned-base.json).',
  );

export type PinnedBase = z.infer<typeof PinnedBaseSchema>;

export const BaseMovedSchema = z
  .object({ pinned: z.string(), resolved: z.string() })
  .nullable()
  .describe(
    'Set when the base resolved now differs from the commit pinned for the task; the pinned one is used.',
  );

async function pinPath(worktree: string, taskId: string): Promise<string> {
  return path.join(await taskStateDirectory(worktree, taskId), 'pinned-base.json');
}

export async function readPinnedBase(
  worktree: string,
  taskId: string,
): Promise<PinnedBase | undefined> {
  const file = await readJsonFile(await pinPath(worktree, taskId));
  if (file.state === 'missing') return undefined;
  const parsed = file.state === 'ok' ? PinnedBaseSchema.safeParse(file.value) : undefined;
  if (!parsed?.success)
    throw new Error(
      `The pinned base ${file.path} is unreadable; re-pin it with coachgate task pin-base.`,
    );
  return parsed.data;
}

export async function writePinnedBase(
  worktree: string,
  taskId: string,
  base: BaseCommit,
  by: PinnedBase['pinned_by'],
): Promise<PinnedBase> {
  const file = await pinPath(worktree, taskId);
  await ensurePrivateDirectory(path.dirname(file));
  const root = await rootCommit(worktree, base.commit);
  const pin: PinnedBase = {
    commit: base.commit,
    source: base.source,
    pinned_at: new Date().toISOString(),
    pinned_by: by,
    ...(root ? { root_commit: root } : {}),
    environment: await startUpSurfaces(worktree),
  };
  await writeJsonAtomically(file, pin);
  return pin;
}
