import type { GateCheck } from './gate-render.js';
import { isBeadTask } from '../repo/beads.js';
import { checkGraphCycles } from './check-graph-cycles.js';
import type { TaskScope } from './task-scope.js';
import { runToolchainGates } from '../quality-gates/toolchain-gates.js';
import { counted } from '../errors/quote.js';

/**
 * The gate's checks beyond the verdict and the test run: the task's graph has no cycle (a cyclic plan can never
 * finish), and the configured build / typecheck / lint commands pass on the current tree.
 */
export async function gateChecks(scope: TaskScope): Promise<GateCheck[]> {
  // A bead belongs to the beads graph; any other task to the task files' graph.
  const bead = await isBeadTask(scope.worktree, scope.taskId);
  const graph = await checkGraphCycles(scope.worktree, { source: bead ? 'beads' : 'tasks' });
  const loops = [
    ...graph.cycles.map((cycle) => cycle.path.join(' → ')),
    ...graph.self_loops.map((id) => `${id} → ${id}`),
  ];
  const graphCheck: GateCheck = {
    name: 'graph',
    passed: loops.length === 0,
    reason:
      loops.length === 0
        ? `no cycles (${counted(graph.node_count, bead ? 'bead' : 'task')}, ${counted(graph.edge_count, 'dependency', 'dependencies')})`
        : `${loops.length} dependency cycle(s): ${loops.join('; ')}`,
    details: graph.suggested_breaks.map((edge) => `break ${edge.from} → ${edge.to}`),
  };
  const toolchain = await runToolchainGates(scope);
  return [
    graphCheck,
    ...toolchain.map((gate) => ({
      name: gate.name,
      passed: gate.passed,
      reason: gate.reason,
      details: [...(gate.sandbox_warning ? [gate.sandbox_warning] : []), ...gate.new_errors],
    })),
  ];
}
