import { fileURLToPath } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { RootsListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { registerPrompts } from './prompts.js';
import { Workspace } from '../repo/workspace.js';
import { registerResources } from './resources.js';
import { selectTools, type ToolSelection } from '../tools/index.js';
import { registerTool, type ToolContext } from '../tools/tool.js';
import { VERSION } from '../package.js';
import { RunTaskStore } from './task-store.js';

/** Clients may run the long tools as tasks (src/server/tool-tasks.ts), list and cancel them. */
const TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

export interface ServerOptions extends ToolSelection {
  /** `--root` directories. When empty, the client's MCP roots are used, else `cwd`. */
  roots?: string[];
  /** `--base` ref overriding the configured/default base commit. */
  base?: string;
  /** Fallback root when neither --root nor client roots exist (default: process.cwd()). */
  cwd?: string;
}

const INSTRUCTIONS = `coachgate verifies a Player agent's work for a Coach agent. Never trust a self-reported "done":
load_task → read_task_work_results → verify_quality_gates → run the tests server-side → check evidence → record the verdict.`;

/** A fresh server per session: no state is shared between clients except the files in the worktree. */
export function createServer(options: ServerOptions = {}): McpServer {
  const tasks = new RunTaskStore();
  const server = new McpServer(
    { name: 'coachgate', version: VERSION },
    {
      instructions: INSTRUCTIONS,
      capabilities: { logging: {}, tasks: TASKS_CAPABILITY },
      taskStore: tasks,
    },
  );
  server.server.onclose = () => tasks.cleanup();
  const workspace = new Workspace(rootsProvider(server, options));
  const role = options.role ?? 'all';
  for (const tool of selectTools(options)) {
    registerTool(server, tasks, tool, (extra): ToolContext => ({
      workspace,
      role,
      baseRef: options.base,
      signal: extra.signal,
      async progress(progress, message, total) {
        const token = extra._meta?.progressToken;
        if (token === undefined) return;
        await extra.sendNotification({
          method: 'notifications/progress',
          params: {
            progressToken: token,
            progress,
            message,
            ...(total !== undefined ? { total } : {}),
          },
        });
      },
    }));
  }
  registerPrompts(server, workspace, options.base, role);
  registerResources(server, workspace);
  return server;
}

function rootsProvider(server: McpServer, options: ServerOptions): () => Promise<string[]> {
  const fallback = options.cwd ?? process.cwd();
  if (options.roots && options.roots.length > 0) {
    const fixed = options.roots;
    return async () => fixed;
  }
  let clientRoots: Promise<string[]> | undefined;
  server.server.setNotificationHandler(RootsListChangedNotificationSchema, async () => {
    clientRoots = undefined;
  });
  return async () => {
    if (!server.server.getClientCapabilities()?.roots) return [fallback];
    clientRoots ??= server.server
      .listRoots()
      .then(({ roots }) =>
        roots
          .filter((root) => root.uri.startsWith('file://'))
          .map((root) => fileURLToPath(root.uri)),
      )
      .catch(() => []);
    const roots = await clientRoots;
    return roots.length > 0 ? roots : [fallback];
  };
}
