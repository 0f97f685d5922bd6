import {
  InMemoryTaskStore,
  type CreateTaskOptions,
} from '@modelcontextprotocol/sdk/experimental/tasks';
import type { Request, RequestId, Result, Task } from '@modelcontextprotocol/sdk/types.js';

/** A plain call's task is only the SDK's way to the call's answer: it is kept this long at most. */
const PLAIN_TTL_MS = 1_000;

/**
 * The MCP tasks of one server (session), in memory: a task is a call in progress, and the client that
 * started it is the only one that can see it. Beyond the SDK's store, it stops a task's run when the
 * client cancels it (tasks/cancel ends in a move to `cancelled`) or the plain call it serves, and it
 * keeps the tasks the SDK makes for plain calls (no `params.task`) out of sight: never listed, their
 * answer handed over once, not kept for hours.
 */
export class RunTaskStore extends InMemoryTaskStore {
  private readonly plain = new Set<string>();
  private readonly answers = new Map<string, Result>();
  private readonly runs = new Map<string, AbortController>();

  override async createTask(
    params: CreateTaskOptions,
    requestId: RequestId,
    request: Request,
    sessionId?: string,
  ): Promise<Task> {
    const asked = request.params?.task !== undefined;
    const task = await super.createTask(
      asked ? params : { ...params, ttl: PLAIN_TTL_MS },
      requestId,
      request,
      sessionId,
    );
    if (!asked) this.plain.add(task.taskId);
    this.runs.set(task.taskId, new AbortController());
    return task;
  }

  /** Whether the client asked for a task; otherwise the SDK made one for a plain call. */
  askedFor(taskId: string): boolean {
    return !this.plain.has(taskId);
  }

  /** Aborted when the client cancels the task or the plain call. */
  cancellation(taskId: string): AbortSignal {
    const controller = this.runs.get(taskId);
    if (!controller) throw new Error(`no run is tracked for task ${taskId}`);
    return controller.signal;
  }

  /** Stops a task's run. */
  stop(taskId: string, reason: unknown): void {
    this.runs.get(taskId)?.abort(reason);
  }

  /** A plain call's answer, for the SDK to take once (getTaskResult). */
  answerPlainCall(taskId: string, result: Result): void {
    this.answers.set(taskId, result);
  }

  /** Stops tracking a task whose run has ended (an asked task's record stays until its ttl). */
  ended(taskId: string): void {
    this.runs.delete(taskId);
    // Out of the listing until the SDK's own record of it expired.
    setTimeout(() => this.plain.delete(taskId), PLAIN_TTL_MS).unref();
  }

  override async getTaskResult(taskId: string, sessionId?: string): Promise<Result> {
    const answer = this.answers.get(taskId);
    if (!answer) return super.getTaskResult(taskId, sessionId);
    this.answers.delete(taskId);
    return answer;
  }

  override async listTasks(
    cursor?: string,
    sessionId?: string,
  ): Promise<{ tasks: Task[]; nextCursor?: string }> {
    const { tasks, nextCursor } = await super.listTasks(cursor, sessionId);
    const asked = tasks.filter((task) => !this.plain.has(task.taskId));
    return { tasks: asked, ...(nextCursor !== undefined ? { nextCursor } : {}) };
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
