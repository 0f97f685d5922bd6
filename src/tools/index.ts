import { checkGraphCyclesTool } from './check-graph-cycles.tool.js';
import { checkTestIntegrityTool } from './check-test-integrity.tool.js';
import { detectStallTool } from './detect-stall.tool.js';
import { loadTaskTool } from './load-task.tool.js';
import { parseValidatorVerdictTool } from './parse-validator-verdict.tool.js';
import { readTaskWorkResultsTool } from './read-task-work-results.tool.js';
import { recordPlayerReportTool } from './record-player-report.tool.js';
import { recordVerdictTool } from './record-verdict.tool.js';
import { runIndependentTestsTool } from './run-independent-tests.tool.js';
import { taskStatusTool } from './task-status.tool.js';
import type { ServerRole, ToolDefinition } from './tool.js';
import { validateRequirementsTool } from './validate-requirements.tool.js';
import { verifyQualityGatesTool } from './verify-quality-gates.tool.js';
import { worktreeFinishTool } from './worktree-finish.tool.js';
import { worktreePreserveTool } from './worktree-preserve.tool.js';
import { worktreeStartTool } from './worktree-start.tool.js';

/** Groups of tools a server can be limited to with `--toolsets`, as github-mcp-server does. */
export const TOOLSETS = {
  tasks: 'read a task, its records and its status',
  report: "record the Player's turn report",
  verify:
    'check a turn: quality gates, server-side test runs, test integrity, requirement evidence, stalls',
  verdict: "record the Coach's verdict",
  utilities: 'validator verdicts and dependency graphs',
  worktrees: 'start, preserve and finish (merge) task worktrees',
} as const;
export type Toolset = keyof typeof TOOLSETS;

// Each tool has its own input/output types; registering only needs the shared shape.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyTool = ToolDefinition<any, any>;

/** Roles that see a tool: the player role cannot reach the verdict, the coach role cannot write a report. */
interface ToolEntry {
  tool: AnyTool;
  toolset: Toolset;
  roles: readonly Exclude<ServerRole, 'all'>[];
}

const BOTH = ['player', 'coach'] as const;

/** Every tool coachgate serves: the Player's, then a Coach turn's in the order it uses them, then utilities. */
const ENTRIES: ToolEntry[] = [
  { tool: loadTaskTool, toolset: 'tasks', roles: BOTH },
  { tool: recordPlayerReportTool, toolset: 'report', roles: ['player'] },
  { tool: readTaskWorkResultsTool, toolset: 'tasks', roles: BOTH },
  { tool: verifyQualityGatesTool, toolset: 'verify', roles: ['coach'] },
  // The player role may run the tests, but those runs are never stored as evidence (see ToolContext.role).
  { tool: runIndependentTestsTool, toolset: 'verify', roles: BOTH },
  { tool: checkTestIntegrityTool, toolset: 'verify', roles: ['coach'] },
  { tool: validateRequirementsTool, toolset: 'verify', roles: ['coach'] },
  { tool: recordVerdictTool, toolset: 'verdict', roles: ['coach'] },
  { tool: detectStallTool, toolset: 'verify', roles: ['coach'] },
  { tool: taskStatusTool, toolset: 'tasks', roles: BOTH },
  { tool: parseValidatorVerdictTool, toolset: 'utilities', roles: BOTH },
  { tool: checkGraphCyclesTool, toolset: 'utilities', roles: BOTH },
  // Worktrees end in a merge: only the Coach side may start, preserve or finish them.
  { tool: worktreeStartTool, toolset: 'worktrees', roles: ['coach'] },
  { tool: worktreePreserveTool, toolset: 'worktrees', roles: ['coach'] },
  { tool: worktreeFinishTool, toolset: 'worktrees', roles: ['coach'] },
];

export const tools = ENTRIES.map((entry) => entry.tool);

export interface ToolSelection {
  /** Default `all`: every tool, for one-user setups. */
  role?: ServerRole;
  /** Toolsets to serve; undefined or empty serves every toolset. */
  toolsets?: readonly Toolset[];
  /** Serve only tools whose readOnlyHint is true. */
  readOnly?: boolean;
}

/** The tools a server with these options lists; anything else is neither listed nor callable. */
export function selectTools(selection: ToolSelection): AnyTool[] {
  const { role = 'all', toolsets, readOnly = false } = selection;
  return ENTRIES.filter(
    (entry) =>
      (role === 'all' || entry.roles.includes(role)) &&
      (!toolsets || toolsets.length === 0 || toolsets.includes(entry.toolset)) &&
      (!readOnly || entry.tool.annotations.readOnlyHint),
  ).map((entry) => entry.tool);
}
