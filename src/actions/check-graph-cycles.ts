import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { CallerError } from '../errors/errors.js';
import { analyzeGraph, type DependencyEdge, type GraphReport } from '../graph/graph.js';
import {
  BLOCKING_BEADS_TYPES,
  edgesFromFeature,
  edgesFromTasks,
  type GraphSource,
} from '../graph/graph-sources.js';
import { parseTaskMarkdown } from '../tasks/task.js';
import { assertTaskId } from '../tasks/task-id.js';
import { readBeadsGraph } from '../repo/beads.js';
import { assertWorkTreeRoot } from '../repo/git.js';
import { TASK_DIRECTORIES } from '../repo/tasks.js';
import { OutsideWorktreeError, readWorktreeFile } from '../repo/worktree-file.js';

export type GraphSourceName = 'tasks' | 'feature' | 'beads' | 'edges';

export interface GraphRequest {
  source?: GraphSourceName;
  feature_id?: string;
  edges?: DependencyEdge[];
  edge_types?: string[];
}

export interface GraphCheck extends GraphReport {
  source: GraphSourceName;
  problems: string[];
}

/** Reads the dependency graph from the chosen source and analyses it (cycles, self loops, dangling, waves). */
export async function checkGraphCycles(
  worktree: string | undefined,
  request: GraphRequest,
): Promise<GraphCheck> {
  const source: GraphSourceName =
    request.source ?? (request.edges ? 'edges' : request.feature_id ? 'feature' : 'tasks');
  const graph = await readSource(worktree, source, request);
  return {
    source,
    ...analyzeGraph(source === 'edges' ? { edges: graph.edges } : graph),
    problems: graph.problems,
  };
}

async function readSource(
  worktree: string | undefined,
  source: GraphSourceName,
  request: GraphRequest,
): Promise<GraphSource> {
  if (source === 'edges') {
    if (!request.edges)
      throw new CallerError(
        'source "edges" needs an edges list.',
        'Pass edges: [{from, to}] where `from` depends on `to`.',
      );
    return { nodes: [], edges: request.edges, problems: [] };
  }
  if (!worktree)
    throw new CallerError(
      `source "${source}" reads files from a worktree, but none was given.`,
      'Pass worktree, or pass edges with source "edges".',
    );
  switch (source) {
    case 'beads':
      return readBeadsGraph(worktree, request.edge_types ?? BLOCKING_BEADS_TYPES);
    case 'feature': {
      if (!request.feature_id)
        throw new CallerError(
          'source "feature" needs feature_id.',
          'Pass feature_id, e.g. FEAT-001 for .guardkit/features/FEAT-001.yaml.',
        );
      assertTaskId(request.feature_id);
      const file = path.join(worktree, '.guardkit', 'features', `${request.feature_id}.yaml`);
      const text = await readWorktreeFile(worktree, file).catch((error: unknown) => {
        if (error instanceof OutsideWorktreeError) throw error;
        throw new CallerError(
          `.guardkit/features/${request.feature_id}.yaml does not exist.`,
          'Check the feature id.',
        );
      });
      return edgesFromFeature(text);
    }
    default:
      // In a folder that is not a project, "0 nodes, acyclic" would be a false all-clear.
      await assertWorkTreeRoot(worktree);
      return taskGraph(worktree);
  }
}

/** Every task file's id and `depends_on`/`dependencies`, from the working tree's task directories. */
export async function taskGraph(worktree: string): Promise<GraphSource> {
  const tasks: { id: string; dependencies: string[] }[] = [];
  const problems: string[] = [];
  for (const directory of TASK_DIRECTORIES) {
    const entries = await readdir(path.join(worktree, directory), { recursive: true }).catch(
      () => [] as string[],
    );
    for (const entry of entries.filter((name) => name.endsWith('.md')).sort()) {
      const relative = path.posix.join(directory, entry.split(path.sep).join('/'));
      try {
        const task = parseTaskMarkdown(
          await readWorktreeFile(worktree, path.join(worktree, relative)),
          relative,
        );
        const id = task.id ?? /^([A-Za-z]+-[A-Za-z0-9]+(?:-\d+)?)/.exec(path.basename(entry))?.[1];
        if (id) tasks.push({ id, dependencies: task.dependencies });
        else problems.push(`${relative}: no id in the front matter or the file name`);
      } catch (error) {
        problems.push((error as Error).message);
      }
    }
  }
  const graph = edgesFromTasks(tasks);
  return { ...graph, problems: [...problems, ...graph.problems] };
}
