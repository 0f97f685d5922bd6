import { loadTaskTool } from './load-task.js';
import { readTaskWorkResultsTool } from './read-task-work-results.js';
import { recordPlayerReportTool } from './record-player-report.js';
import type { ToolDefinition } from './tool.js';
import { verifyQualityGatesTool } from './verify-quality-gates.js';

/** Every tool coachgate serves, in the order a Coach turn uses them. */
export const tools: ToolDefinition[] = [loadTaskTool, readTaskWorkResultsTool, verifyQualityGatesTool, recordPlayerReportTool] as unknown as ToolDefinition[];
