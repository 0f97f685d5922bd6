import { checkGraphCyclesTool } from './check-graph-cycles.js';
import { checkTestIntegrityTool } from './check-test-integrity.js';
import { detectStallTool } from './detect-stall.js';
import { loadTaskTool } from './load-task.js';
import { parseValidatorVerdictTool } from './parse-validator-verdict.js';
import { readTaskWorkResultsTool } from './read-task-work-results.js';
import { recordPlayerReportTool } from './record-player-report.js';
import { recordVerdictTool } from './record-verdict.js';
import { runIndependentTestsTool } from './run-independent-tests.js';
import { taskStatusTool } from './task-status.js';
import type { ToolDefinition } from './tool.js';
import { validateRequirementsTool } from './validate-requirements.js';
import { verifyQualityGatesTool } from './verify-quality-gates.js';
import { worktreeFinishTool } from './worktree-finish.js';
import { worktreePreserveTool } from './worktree-preserve.js';
import { worktreeStartTool } from './worktree-start.js';

// `any`: each tool has its own input/output types; registerTool only needs the shared shape.
/** Every tool coachgate serves: the Player's, then a Coach turn's in the order it uses them, then utilities. */
export const tools = [
  loadTaskTool,
  recordPlayerReportTool,
  readTaskWorkResultsTool,
  verifyQualityGatesTool,
  runIndependentTestsTool,
  checkTestIntegrityTool,
  validateRequirementsTool,
  recordVerdictTool,
  detectStallTool,
  taskStatusTool,
  parseValidatorVerdictTool,
  checkGraphCyclesTool,
  worktreeStartTool,
  worktreePreserveTool,
  worktreeFinishTool,
] as ToolDefinition<any, any>[];
