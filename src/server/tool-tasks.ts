import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type {
  CreateTaskRequestHandlerExtra,
  ToolTaskHandler,
} from '@modelcontextprotocol/sdk/experimental/tasks';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { claim, detach, track, type CallIdentity, type TrackedCall } from './detached-calls.js';
import type { RunTaskStore } from './task-store.js';

/**
 * Tools that run test suites, served as MCP tasks (2025-11-25 spec, the SDK's experimental API). A
 * client that asks for a task gets its handle at once and polls tasks/get (the status message is the
 * step in progress), fetches tasks/result, or stops the run with tasks/cancel. A plain call is
 * answered as before, with progress notifications; when its client stops waiting (it timed out, or
 * went away) it runs on, and its answer goes to the next identical call (detached-calls.ts).
 */

/** How the run of one call is controlled: what stops it, and where its step in progress goes. */
export interface RunControl {
  signal: AbortSignal;
  status(message: string): void;
}

type Extra = CreateTaskRequestHandlerExtra;
export interface ToolConfig {
  title: string;
  description: string;
  inputSchema: z.ZodObject;
  outputSchema: z.ZodObject;
  annotations: ToolAnnotations;
}

export interface TaskTool {
  /** The call itself; it never throws (failures are isError results). */
  call(input: unknown, extra: Extra, run: RunControl): Promise<CallToolResult>;
  /** What makes two calls the same; undefined when the input names no usable worktree. */
  identify(input: unknown, extra: Extra): Promise<CallIdentity | undefined>;
  /** A progress notification on the call (none when the client sent no progress token). */
  notify(extra: Extra, progress: number, message: string): Promise<void>;
}

/** A task's result is kept at least this long: a run may take an hour (MAX_TIMEOUT_S). */
const MIN_TTL_MS = 2 * 60 * 60 * 1000;
const POLL_INTERVAL_MS = 1000;
/**
 * A call's answer, a refusal (isError) included, completes its task: `failed` is for protocol errors,
 * and a client does not fetch a failed task's result, so it would lose the refusal's reasons.
 */
const COMPLETED = 'completed' as const;

export function registerTaskTool(
  server: McpServer,
  store: RunTaskStore,
  name: string,
  config: ToolConfig,
  tool: TaskTool,
): void {
  const handler: ToolTaskHandler<z.ZodObject> = {
    createTask: (input, extra) => start(server, store, tool, input, extra),
    getTask: (_input, extra) => extra.taskStore.getTask(extra.taskId),
    getTaskResult: async (_input, extra) =>
      (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
  };
  server.experimental.tasks.registerToolTask(
    name,
    { ...config, execution: { taskSupport: 'optional' } },
    handler,
  );
}

async function start(
  server: McpServer,
  store: RunTaskStore,
  tool: TaskTool,
  input: unknown,
  extra: Extra,
) {
  const requested = extra.taskRequestedTtl;
  const task = await extra.taskStore.createTask({
    ttl: requested === null ? null : Math.max(requested ?? 0, MIN_TTL_MS),
    pollInterval: POLL_INTERVAL_MS,
  });
  const id = task.taskId;
  const asked = store.askedFor(id);
  const run: RunControl = {
    signal: store.cancellation(id),
    status(message) {
      // A plain call's client knows nothing of the task: its progress notifications say the same.
      if (!asked) return;
      // Dropped when the task was cancelled or expired meanwhile.
      extra.taskStore.updateTaskStatus(id, 'working', message).catch(() => undefined);
    },
  };
  const identity = await tool.identify(input, extra);
  const tracked = identity && track(identity, !asked);
  const result = answer(tool, input, extra, run, tracked).finally(() => store.ended(id));
  if (asked) {
    // The run outlives this request: its result waits in the store for tasks/result.
    void result
      .then((done) => extra.taskStore.storeTaskResult(id, COMPLETED, done))
      .catch(() => undefined); // cancelled (no result is stored then) or the task expired
    return { task };
  }
  whenAborted(extra.signal, () => {
    const why = stoppedWaiting(server, extra.signal.reason);
    if (!why) store.stop(id, extra.signal.reason);
    else if (tracked) detach(tracked, result, why);
  });
  // The SDK answers the plain call with the task's result once the task it is given is complete.
  store.answerPlainCall(id, await result);
  return { task: { ...task, status: COMPLETED } };
}

/** An earlier identical call's answer when one waits, else a run of its own. */
async function answer(
  tool: TaskTool,
  input: unknown,
  extra: Extra,
  run: RunControl,
  tracked: TrackedCall | undefined,
): Promise<CallToolResult> {
  let ticks = 0;
  // Waiting on the earlier call shows progress as a run of its own would.
  const waiting = (message: string) => {
    run.status(message);
    tool.notify(extra, ++ticks, message).catch(() => undefined);
  };
  const earlier = tracked && (await claim(tracked, run.signal, waiting));
  return earlier ?? tool.call(input, extra, run);
}

/**
 * A plain call ends when its client cancels it (notifications/cancelled) or goes away. A cancel stops
 * the run and its process tree; a client that went away or timed out only stopped waiting: the SDK
 * client cancels with "Request timed out" (-32001), as the hosts built on it do. The closing
 * connection aborts its calls before it is marked closed, so this looks a tick later.
 */
function whenAborted(signal: AbortSignal, then: () => void): void {
  const later = () => void setImmediate(then);
  if (signal.aborted) later();
  else signal.addEventListener('abort', later, { once: true });
}

const TIMEOUT = /timed?[ -]?out|-32001/i;

function stoppedWaiting(server: McpServer, reason: unknown): string | undefined {
  if (!server.isConnected()) return 'went away';
  return TIMEOUT.test(String(reason)) ? 'timed out' : undefined;
}
