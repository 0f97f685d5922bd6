import path from 'node:path';
import { CallerError } from '../errors/errors.js';
import { edgesFromBeads, type GraphSource } from '../graph/graph-sources.js';
import { pathExists } from '../records/files.js';
import { childRun } from './child-output.js';
import { readWorktreeFile } from './worktree-file.js';

/** Where older `bd` kept its data and where `bd export -o` is told to write it. */
export const BEADS_JSONL = '.beads/issues.jsonl';
const BD_EXPORT_TIMEOUT_MS = 60_000;
const BD_EXPORT_MAX_BYTES = 256 * 1024 * 1024;

/**
 * The beads issues as JSONL: `.beads/issues.jsonl` when it exists, else `bd export`, which current bd
 * (data kept in Dolt, no JSONL file) prints to stdout in the same one-issue-per-line shape.
 */
export async function readBeadsJsonl(worktree: string): Promise<string> {
  const file = path.join(worktree, BEADS_JSONL);
  if (await pathExists(file)) return readWorktreeFile(worktree, file);
  const exported = await childRun('bd', ['export'], {
    cwd: worktree,
    input: '',
    env: process.env as Record<string, string>,
    timeoutMs: BD_EXPORT_TIMEOUT_MS,
    maxBytes: BD_EXPORT_MAX_BYTES,
  });
  if (exported.code === 'ENOENT')
    throw new CallerError(
      `${BEADS_JSONL} does not exist in the worktree and the \`bd\` command is not installed, so the beads graph cannot be read.`,
      `Install bd (npm install -g @beads/bd, or see github.com/gastownhall/beads), or write the JSONL yourself with \`bd export -o ${BEADS_JSONL}\`; or use source "tasks" or "feature".`,
    );
  if (exported.failed)
    throw new CallerError(
      `\`bd export\` failed in ${worktree} (${exported.shortMessage}): ${lastLines(exported.stderr)}`,
      `Run \`bd export\` there yourself to see why (is this a beads project? \`bd init\` makes one), or write ${BEADS_JSONL} with \`bd export -o ${BEADS_JSONL}\`.`,
    );
  return exported.stdout;
}

/** The beads dependency graph of a worktree (see readBeadsJsonl for where it comes from). */
export async function readBeadsGraph(
  worktree: string,
  edgeTypes?: readonly string[],
): Promise<GraphSource> {
  return edgesFromBeads(await readBeadsJsonl(worktree), edgeTypes);
}

/**
 * A bead task is a task whose id is an issue in the repository's beads graph. A graph that cannot be read
 * makes no task a bead task: what depends on it (the review copy, the gate's graph) is then the default.
 */
export async function isBeadTask(worktree: string, taskId: string): Promise<boolean> {
  if (!(await pathExists(path.join(worktree, '.beads')))) return false;
  const graph = await readBeadsGraph(worktree).catch(() => null);
  return graph?.nodes.includes(taskId) ?? false;
}

/** Where the coach-gate skill reads a bead task's review; null for other tasks. */
export async function beadReviewPath(worktree: string, taskId: string): Promise<string | null> {
  return (await isBeadTask(worktree, taskId))
    ? path.join(worktree, '.beads', 'artifacts', taskId, 'review.md')
    : null;
}

function lastLines(text: string): string {
  return text.trim().split('\n').slice(-5).join('\n') || '(no error output)';
}
