import {
  InMemoryTaskStore,
  type CreateTaskOptions,
} from '@modelcontextprotocol/sdk/experimental/tasks';
import type { Request, RequestId, Task } from '@modelcontextprotocol/sdk/types.js';

/**
 * The MCP tasks of one server (session), in memory: a task is a call in progress, and the client that
 * started it is the only one that can see it. Beyond the SDK's store, it knows which tasks the client
 * asked for (`params.task`) and which were made for a plain call, and it stops a task's run when the
 * client cancels it (tasks/cancel ends in a move to `cancelled`) or the plain call it serves.
 */
export class RunTaskStore extends InMemoryTaskStore {
  private readonly asked = new Set<string>();
  private readonly runs = new Map<string, AbortController>();

  override async createTask(
    params: CreateTaskOptions,
    requestId: RequestId,
    request: Request,
    sessionId?: string,
  ): Promise<Task> {
    const task = await super.createTask(params, requestId, request, sessionId);
    if (request.params?.task !== undefined) this.asked.add(task.taskId);
    this.runs.set(task.taskId, new AbortController());
    return task;
  }

  /** Whether the client asked for a task; otherwise the SDK made one for a plain call. */
  askedFor(taskId: string): boolean {
    return this.asked.has(taskId);
  }

  /** Aborted when the client cancels the task. */
  cancellation(taskId: string): AbortSignal {
    const controller = this.runs.get(taskId);
    if (!controller) throw new Error(`no run is tracked for task ${taskId}`);
    return controller.signal;
  }

  /** Stops tracking a task whose run has ended (its record stays until its ttl). */
  ended(taskId: string): void {
    this.asked.delete(taskId);
    this.runs.delete(taskId);
  }

  /** Stops a task's run: the client cancelled the call. */
  stop(taskId: string, reason: unknown): void {
    this.runs.get(taskId)?.abort(reason);
  }

  override async updateTaskStatus(
    taskId: string,
    status: Task['status'],
    statusMessage?: string,
    sessionId?: string,
  ): Promise<void> {
    await super.updateTaskStatus(taskId, status, statusMessage, sessionId);
    if (status === 'cancelled') this.stop(taskId, 'the client cancelled the task (tasks/cancel)');
  }
}
