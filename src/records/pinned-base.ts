import path from 'node:path';
import { z } from 'zod';
import { readFile } from 'node:fs/promises';
import { readJsonFile, writeFileAtomically, writeJsonAtomically } from './files.js';
import { rootCommit, type BaseCommit } from '../repo/git.js';
import { fileDigest } from '../repo/file-digest.js';
import { nodeModulesContent } from '../repo/node-modules.js';
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
    node_modules: z
      .object({
        files: z.number().int().nonnegative(),
        sha256: z.string(),
      })
      .optional()
      .describe(
        "The borrowed node_modules by content when the base was pinned: how many files, and the sha256 (urlsafe base64) of pinned-node-modules.json beside this file, which lists each file's sha256 (or link target). A file edited, added or removed since is refused. Absent when there was no node_modules, and in older pins.",
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

export async function pinnedBasePath(worktree: string, taskId: string): Promise<string> {
  return path.join(await taskStateDirectory(worktree, taskId), 'pinned-base.json');
}

/** The pinned node_modules content, kept apart: tens of thousands of lines every tool call skips. */
async function nodeModulesPinPath(worktree: string, taskId: string): Promise<string> {
  return path.join(await taskStateDirectory(worktree, taskId), 'pinned-node-modules.json');
}

export async function readPinnedBase(
  worktree: string,
  taskId: string,
): Promise<PinnedBase | undefined> {
  const file = await readJsonFile(await pinnedBasePath(worktree, taskId));
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
  const file = await pinnedBasePath(worktree, taskId);
  await ensurePrivateDirectory(path.dirname(file));
  const root = await rootCommit(worktree, base.commit);
  const pin: PinnedBase = {
    commit: base.commit,
    source: base.source,
    pinned_at: new Date().toISOString(),
    pinned_by: by,
    ...(root ? { root_commit: root } : {}),
    environment: await startUpSurfaces(worktree),
    ...(await pinNodeModules(worktree, taskId)),
  };
  await writeJsonAtomically(file, pin);
  return pin;
}

async function pinNodeModules(
  worktree: string,
  taskId: string,
): Promise<Pick<PinnedBase, 'node_modules'>> {
  const content = await nodeModulesContent(worktree);
  if (!content) return {};
  const file = await nodeModulesPinPath(worktree, taskId);
  await writeFileAtomically(file, JSON.stringify(content)); // compact: a big tree is megabytes
  const sha256 = await fileDigest(file);
  return sha256 ? { node_modules: { files: Object.keys(content).length, sha256 } } : {};
}

/** Parsed pinned node_modules records by their digest: one parse per pin and server process. */
const pinnedContents = new Map<string, Record<string, string>>();

/**
 * The node_modules content recorded when the task's base was pinned; undefined when the pin has
 * none. Throws when the file is missing or no longer has the digest the pin holds.
 */
export async function readPinnedNodeModules(
  worktree: string,
  taskId: string,
  pin: PinnedBase,
): Promise<Record<string, string> | undefined> {
  if (!pin.node_modules) return undefined;
  const file = await nodeModulesPinPath(worktree, taskId);
  const digest = await fileDigest(file);
  if (digest !== pin.node_modules.sha256)
    throw new Error(
      `The pinned node_modules record ${file} is missing or altered; re-pin with coachgate task pin-base.`,
    );
  let content = pinnedContents.get(digest);
  if (!content) {
    // Its digest matched the pin's: the file is the one written, whatever its size.
    content = z.record(z.string(), z.string()).parse(JSON.parse(await readFile(file, 'utf8')));
    pinnedContents.set(digest, content);
  }
  return content;
}
