import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { CallerError } from '../errors/errors.js';
import { completeTaskId } from './task-completion.js';
import { AGENT_ROLES, buildAgentPrompt, type AgentRole } from '../actions/agent-prompt.js';
import { openTask } from '../actions/task-scope.js';
import { autobuildPromptText } from '../autobuild/prompt.js';
import type { Workspace } from '../repo/workspace.js';
import type { ServerRole } from '../tools/tool.js';

const DESCRIPTIONS: Record<AgentRole, string> = {
  player:
    'Player instructions for a task turn: implement, test, record the report; never declare completion.',
  coach:
    'Coach instructions for a task turn: verify with coachgate tools in order, then record the verdict.',
  validator:
    'Validator instructions: review a change and end with **Verdict: PASS|WARN|FAIL** and findings.',
  'issue-verifier':
    'Issue-verifier instructions: check the change solves its issue; ends with a PASS|WARN|FAIL verdict.',
};

/** A server offers the instructions of the agents that use it; the validator works for the Coach. */
const PROMPTS_BY_ROLE: Record<ServerRole, readonly AgentRole[]> = {
  player: ['player'],
  coach: ['coach', 'validator', 'issue-verifier'],
  all: Object.keys(AGENT_ROLES) as AgentRole[],
};

/** The agents/ files as MCP prompts, with the task's requirements and the latest feedback appended. */
export function registerPrompts(
  server: McpServer,
  workspace: Workspace,
  baseRef: string | undefined,
  serverRole: ServerRole,
): void {
  for (const role of PROMPTS_BY_ROLE[serverRole]) {
    server.registerPrompt(
      role,
      {
        title: `coachgate ${role}`,
        description: DESCRIPTIONS[role],
        argsSchema: {
          task_id: completable(z.string().describe('Task id, e.g. TASK-001.'), (value, context) =>
            completeTaskId(workspace, value, context?.arguments?.worktree),
          ),
          turn: z
            .string()
            .regex(/^\d+$/)
            .optional()
            .describe(
              'Turn number (default: the next Player turn / the latest one for the Coach).',
            ),
          worktree: z.string().optional().describe('Repository (default: the first allowed root).'),
        },
      },
      async ({ task_id, turn, worktree }) => {
        try {
          const root = await workspace.resolveWorktree(worktree ?? '.');
          const text = await buildAgentPrompt(
            role,
            await openTask(root, task_id, baseRef),
            turn ? Number(turn) : undefined,
          );
          return {
            description: DESCRIPTIONS[role],
            messages: [{ role: 'user', content: { type: 'text', text } }],
          };
        } catch (error) {
          // An unknown task or a bad worktree is the caller's argument: invalid params, not an internal error.
          if (error instanceof CallerError)
            throw new McpError(ErrorCode.InvalidParams, error.message);
          throw error;
        }
      },
    );
  }
  // The loop orchestrates both agents and ends in a verdict: never offered to the Player's server.
  if (serverRole === 'player') return;
  server.registerPrompt(
    'autobuild',
    {
      title: 'coachgate AutoBuild loop',
      description:
        'Runs the Player/Coach loop for a task in this session: a fresh subagent per turn, the verdict from the records.',
      argsSchema: {
        task_id: z.string().describe('Task id, e.g. TASK-001.'),
        max_turns: z
          .string()
          .regex(/^\d+$/)
          .optional()
          .describe('Most turns before the task is preserved for a human (default 5).'),
      },
    },
    async ({ task_id, max_turns }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text: autobuildPromptText(task_id, max_turns ? Number(max_turns) : 5),
          },
        },
      ],
    }),
  );
}
