import { z } from 'zod';
import { checkGraphCycles } from '../actions/check-graph-cycles.js';
import { defineTool, READ_ONLY } from './tool.js';
import { worktreeInput } from './shared-inputs.js';

const edge = z.object({ from: z.string(), to: z.string() });

export const checkGraphCyclesTool = defineTool({
  name: 'check_graph_cycles',
  title: 'Check dependency graph for cycles',
  description:
    'Finds dependency cycles (one deterministic witness per strongly connected component), self loops and dependencies on unknown ids in task files (depends_on/dependencies), a GuardKit feature file, beads (.beads/issues.jsonl, else `bd export`) or an explicit edge list. When acyclic, returns the waves of tasks that can run in parallel; when cyclic, one edge per cycle whose removal breaks it. Linear time, no timeout.',
  input: z.object({
    worktree: worktreeInput
      .optional()
      .describe('Repository to read tasks/features/beads from (not needed with source "edges").'),
    source: z
      .enum(['tasks', 'feature', 'beads', 'edges'])
      .optional()
      .describe('Default: "edges" when edges are given, "feature" with feature_id, else "tasks".'),
    feature_id: z
      .string()
      .optional()
      .describe('For source "feature": .guardkit/features/<feature_id>.yaml.'),
    edges: z
      .array(
        z.object({ from: z.string().min(1), to: z.string().min(1), type: z.string().optional() }),
      )
      .max(2_000_000)
      .optional()
      .describe('For source "edges": `from` depends on `to`.'),
    edge_types: z
      .array(z.string())
      .optional()
      .describe('For beads: dependency types that count (default: blocks, parent-child).'),
  }),
  output: z.object({
    source: z.enum(['tasks', 'feature', 'beads', 'edges']),
    node_count: z.number(),
    edge_count: z.number(),
    acyclic: z.boolean(),
    cycles: z.array(z.object({ nodes: z.array(z.string()), path: z.array(z.string()) })),
    self_loops: z.array(z.string()),
    dangling: z.array(edge),
    waves: z.array(z.array(z.string())),
    suggested_breaks: z.array(edge),
    problems: z.array(z.string()),
  }),
  annotations: READ_ONLY,
  async run({ worktree, ...request }, context) {
    const root =
      worktree === undefined ? undefined : await context.workspace.resolveWorktree(worktree);
    const report = await checkGraphCycles(root, request);
    const cycles = report.cycles.map((cycle) => cycle.path.join(' → '));
    const problems = report.problems.length
      ? ` ${report.problems.length} unreadable entr(y/ies): ${report.problems.slice(0, 3).join('; ')}.`
      : '';
    const dangling = report.dangling.length
      ? ` ${report.dangling.length} dependency(ies) on unknown ids.`
      : '';
    return {
      data: report,
      summary: report.acyclic
        ? `Acyclic: ${report.node_count} nodes, ${report.edge_count} edges, ${report.waves.length} wave(s).${dangling}${problems}`
        : `CYCLES: ${[...cycles, ...report.self_loops.map((id) => `${id} → ${id}`)].slice(0, 5).join('; ')}. Break: ${report.suggested_breaks
            .slice(0, 5)
            .map((item) => `${item.from} → ${item.to}`)
            .join(', ')}.${dangling}${problems}`,
    };
  },
});
