import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { CallerError } from './core/errors.js';
import { completeTaskId } from './task-completion.js';
import { AGENT_ROLES, buildAgentPrompt, type AgentRole } from './actions/agent-prompt.js';
import { openTask } from './actions/task-scope.js';
import type { Workspace } from './repo/workspace.js';

const DESCRIPTIONS: Record<AgentRole, string> = {
  player: 'Player instructions for a task turn: implement, test, record the report; never declare completion.',
  coach: 'Coach instructions for a task turn: verify with coachgate tools in order, then record the verdict.',
  validator: 'Validator instructions: review a change and end with **Verdict: PASS|WARN|FAIL** and findings.',
};

/** The agents/ files as MCP prompts, with the task's requirements and the latest feedback appended. */
export function registerPrompts(server: McpServer, workspace: Workspace, baseRef: string | undefined): void {
  for (const role of Object.keys(AGENT_ROLES) as AgentRole[]) {
    server.registerPrompt(
      role,
      {
        title: `coachgate ${role}`,
        description: DESCRIPTIONS[role],
        argsSchema: {
          task_id: completable(z.string().describe('Task id, e.g. TASK-001.'), (value, context) =>
            completeTaskId(workspace, value, context?.arguments?.worktree),
          ),
          turn: z.string().regex(/^\d+$/).optional().describe('Turn number (default: the next Player turn / the latest one for the Coach).'),
          worktree: z.string().optional().describe('Repository (default: the first allowed root).'),
        },
      },
      async ({ task_id, turn, worktree }) => {
        try {
          const root = await workspace.resolveWorktree(worktree ?? '.');
          const text = await buildAgentPrompt(role, await openTask(root, task_id, baseRef), turn ? Number(turn) : undefined);
          return { description: DESCRIPTIONS[role], messages: [{ role: 'user', content: { type: 'text', text } }] };
        } catch (error) {
          // An unknown task or a bad worktree is the caller's argument: invalid params, not an internal error.
          if (error instanceof CallerError) throw new McpError(ErrorCode.InvalidParams, error.message);
          throw error;
        }
      },
    );
  }
}
