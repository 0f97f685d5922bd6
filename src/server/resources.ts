import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { CallerError } from '../errors/errors.js';
import { reviewText, runRecords, tasksWithRecords, turnRecords } from '../actions/task-records.js';
import type { Workspace } from '../repo/workspace.js';
import { completeTaskId } from './task-completion.js';

/**
 * A task's records as resources, for the first allowed root (the repository coachgate was started for):
 * `coachgate://tasks/{task_id}/review` (review.md), `/turns` (player and coach turn records), `/runs`.
 */
const RESOURCE_NOT_FOUND = -32002;

export function registerResources(server: McpServer, workspace: Workspace): void {
  const root = () => workspace.resolveWorktree('.');
  const kinds = [
    {
      name: 'review',
      title: 'Task review (review.md)',
      mimeType: 'text/markdown',
      read: (worktree: string, id: string) => reviewText(worktree, id),
    },
    {
      name: 'turns',
      title: 'Player and Coach turn records',
      mimeType: 'application/json',
      read: async (worktree: string, id: string) =>
        JSON.stringify(await turnRecords(worktree, id), null, 2),
    },
    {
      name: 'runs',
      title: 'Independent test runs (newest first)',
      mimeType: 'application/json',
      read: async (worktree: string, id: string) =>
        JSON.stringify(await runRecords(worktree, id), null, 2),
    },
  ];
  for (const kind of kinds) {
    server.registerResource(
      `task-${kind.name}`,
      new ResourceTemplate(`coachgate://tasks/{task_id}/${kind.name}`, {
        list: async () => ({
          resources: (await tasksWithRecords(await root())).map((id) => ({
            uri: `coachgate://tasks/${id}/${kind.name}`,
            name: `${id} ${kind.name}`,
            mimeType: kind.mimeType,
          })),
        }),
        complete: { task_id: (value) => completeTaskId(workspace, value) },
      }),
      { title: kind.title, mimeType: kind.mimeType },
      async (uri, { task_id }) => {
        try {
          return {
            contents: [
              {
                uri: uri.href,
                mimeType: kind.mimeType,
                text: await kind.read(await root(), String(task_id)),
              },
            ],
          };
        } catch (error) {
          // MCP's "resource not found" code, so clients can tell a missing record from a server fault.
          if (error instanceof CallerError) throw new McpError(RESOURCE_NOT_FOUND, error.message);
          throw error;
        }
      },
    );
  }
}
