import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type {
  CallToolResult,
  ServerNotification,
  ServerRequest,
  ToolAnnotations,
} from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { z } from 'zod';
import { environmentFault } from '../errors/environment-fault.js';
import { CallerError } from '../errors/errors.js';
import { boundedMessage } from '../errors/quote.js';
import { oversizedAnswer } from './answer-size.js';
import type { Workspace } from '../repo/workspace.js';
import type { CallIdentity } from '../server/detached-calls.js';
import type { RunTaskStore } from '../server/task-store.js';
import { registerTaskTool, type RunControl } from '../server/tool-tasks.js';
import { stateRoot } from '../records/state-directory.js';

/** Who a server is for: `player` and `coach` see only their tools (src/tools/index.ts); `all` sees every tool. */
export type ServerRole = 'player' | 'coach' | 'all';
export const SERVER_ROLES: readonly ServerRole[] = ['player', 'coach', 'all'];

export interface ToolContext {
  workspace: Workspace;
  /** The server's role. A player-role server never stores what it runs as evidence. */
  role: ServerRole;
  /** `--base` from the command line: overrides the configured/default base ref. */
  baseRef?: string;
  signal: AbortSignal;
  /** Sends `notifications/progress` when the client asked for it (sent a progress token); otherwise a no-op. */
  progress(progress: number, message: string, total?: number): Promise<void>;
}

export interface ToolOutcome<Output> {
  data: Output;
  /** One or two lines a person can read; the full data goes in structuredContent. */
  summary: string;
}

type AllAnnotations = Required<
  Pick<ToolAnnotations, 'readOnlyHint' | 'destructiveHint' | 'idempotentHint' | 'openWorldHint'>
>;

/** A tool that reads and computes only: its answer depends on the repository and records alone. */
export const READ_ONLY: AllAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

export interface ToolDefinition<
  Input extends z.ZodObject = z.ZodObject,
  Output extends z.ZodObject = z.ZodObject,
> {
  name: string;
  title: string;
  description: string;
  input: Input;
  output: Output;
  annotations: AllAnnotations;
  /**
   * Runs test suites, for minutes: served as an MCP task when the client asks for one, and a call
   * whose client stops waiting runs on for the next identical call (src/server/tool-tasks.ts).
   */
  longRunning?: true;
  run(input: z.output<Input>, context: ToolContext): Promise<ToolOutcome<z.input<Output>>>;
}

/** Identity function that makes TypeScript infer one tool's input and output types. */
export function defineTool<Input extends z.ZodObject, Output extends z.ZodObject>(
  tool: ToolDefinition<Input, Output>,
): ToolDefinition<Input, Output> {
  return tool;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export function registerTool(
  server: McpServer,
  tasks: RunTaskStore,
  tool: ToolDefinition,
  context: (extra: Extra) => ToolContext,
): void {
  const config = {
    title: tool.title,
    description: tool.description,
    inputSchema: tool.input,
    outputSchema: tool.output,
    annotations: { title: tool.title, ...tool.annotations },
  };
  if (!tool.longRunning) {
    server.registerTool(tool.name, config, (input: unknown, extra: Extra) =>
      answer(server, tool, input, context(extra)),
    );
    return;
  }
  registerTaskTool(server, tasks, tool.name, config, {
    call: (input, extra, run) => answer(server, tool, input, runContext(context(extra), run)),
    identify: (input, extra) => identify(tool.name, input, context(extra)),
    notify: (extra, progress, message) => context(extra).progress(progress, message),
  });
}

async function answer(
  server: McpServer,
  tool: ToolDefinition,
  input: unknown,
  context: ToolContext,
): Promise<CallToolResult> {
  try {
    const { data, summary } = await tool.run(input as never, context);
    const chain = (data as { verdict_chain?: { intact?: boolean; problems?: string[] } })
      .verdict_chain;
    if (chain?.intact === false)
      log(server, 'error', { tool: tool.name, tampering: chain.problems ?? [] });
    else if (!tool.annotations.readOnlyHint) log(server, 'info', { tool: tool.name, summary });
    const result: CallToolResult = {
      content: [{ type: 'text', text: summary }],
      structuredContent: data as Record<string, unknown>,
    };
    const oversized = oversizedAnswer(tool.name, result);
    if (oversized) throw oversized;
    return result;
  } catch (thrown) {
    const error = await explainFault(tool.name, thrown, input, context);
    const result = errorResult(tool.name, error);
    log(server, error instanceof CallerError ? 'warning' : 'error', {
      tool: tool.name,
      ...(result._meta?.[REFUSAL_META] ?? { error: textOfResult(result) }),
    });
    return result;
  }
}

/** A run that may outlive its request: its own cancellation stops it; each step is its status. */
function runContext(base: ToolContext, run: RunControl): ToolContext {
  return {
    ...base,
    signal: run.signal,
    async progress(progress, message, total) {
      run.status(message);
      // A task's request is answered already: a notification that can no longer go is dropped.
      await base.progress(progress, message, total).catch(() => undefined);
    },
  };
}

/** Two calls are the same when tool, role, base, resolved worktree and the rest of the input are. */
async function identify(
  name: string,
  input: unknown,
  context: ToolContext,
): Promise<CallIdentity | undefined> {
  const { worktree, ...rest } = (input ?? {}) as { worktree?: unknown };
  if (typeof worktree !== 'string') return undefined;
  const root = await context.workspace.resolveWorktree(worktree).catch(() => undefined);
  if (root === undefined) return undefined;
  return {
    worktree: root,
    key: JSON.stringify([name, context.role, context.baseRef ?? null, root, rest]),
  };
}

/**
 * Where a refused call's reasons travel as data: `_meta["coachgate/refusal"]` = `{ message, fix?, ...details }`
 * (e.g. `reasons` for a refused approval). Not `structuredContent`: the SDK client validates that against the
 * tool's output schema even on errors, and a refusal is not the tool's output.
 */
export const REFUSAL_META = 'coachgate/refusal';

/** `notifications/message` to the client, at the level it asked for with logging/setLevel; never fails a call. */
function log(
  server: McpServer,
  level: 'info' | 'warning' | 'error',
  data: Record<string, unknown>,
): void {
  if (!server.isConnected()) return;
  server.sendLoggingMessage({ level, logger: 'coachgate', data }).catch(() => undefined);
}

function textOfResult(result: CallToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

/**
 * Faults the caller can act on become caller errors: a full disk, a read-only or forbidden state
 * directory, a worktree deleted while the call ran. Anything else stays an internal fault.
 */
async function explainFault(
  toolName: string,
  error: unknown,
  input: unknown,
  context: ToolContext,
): Promise<unknown> {
  if (error instanceof CallerError) return error;
  const fault = environmentFault(error, { stateRoot: stateRoot() });
  if (fault) return fault;
  const { worktree, task_id: taskId } = (input ?? {}) as { worktree?: unknown; task_id?: unknown };
  if (typeof worktree !== 'string') return error;
  const gone = await context.workspace.resolveWorktree(worktree).then(
    () => false,
    () => true,
  );
  if (!gone) return error;
  return new CallerError(
    `The worktree ${worktree} no longer exists: it was deleted while ${toolName} ran (${error instanceof Error ? error.message : String(error)}).`,
    `Records already written stay in the state directory. Re-create the worktree${typeof taskId === 'string' ? ` (coachgate worktree start --task ${taskId})` : ''} or pass an existing one, then retry.`,
  );
}

/** Caller mistakes say what to fix; internal faults are logged to stderr (never stdout) and reported briefly. */
function errorResult(toolName: string, error: unknown): CallToolResult {
  if (error instanceof CallerError) {
    const refusal = {
      message: boundedMessage(error.message),
      ...(error.fix ? { fix: error.fix } : {}),
      ...error.details,
    };
    return {
      isError: true,
      content: [{ type: 'text', text: refusal.message }],
      _meta: { [REFUSAL_META]: refusal },
    };
  }
  process.stderr.write(
    `coachgate: ${toolName} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  return {
    isError: true,
    content: [
      {
        type: 'text',
        text: boundedMessage(
          `coachgate could not complete ${toolName}: ${error instanceof Error ? error.message : String(error)}`,
        ),
      },
    ],
  };
}
