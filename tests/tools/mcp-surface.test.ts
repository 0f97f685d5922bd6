import {
  LoggingMessageNotificationSchema,
  McpError,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { REFUSAL_META } from '../../src/tools/tool.js';
import type { TempRepo } from '../helpers/git-repo.js';
import { callTool, connect } from '../helpers/mcp.js';
import { greetingProject } from '../helpers/node-project.js';

let repo: TempRepo;
afterEach(() => repo?.remove());

describe('completions, logging, refusals and prompt errors through a real MCP client', () => {
  it('completes task_id for prompts and resource templates from the task files', async () => {
    repo = greetingProject();
    repo.write(
      '.guardkit/tasks/backlog/TASK-043-farewell.md',
      '---\nid: TASK-043\ntitle: Farewell\n---\n',
    );
    repo.write('tasks/OTHER-1.md', '---\ntitle: no id, named by its file\n---\n');
    const { client, close } = await connect({ roots: [repo.dir] });
    try {
      expect(client.getServerCapabilities()?.completions).toBeDefined();
      const prompt = await client.complete({
        ref: { type: 'ref/prompt', name: 'coach' },
        argument: { name: 'task_id', value: 'task-04' },
      });
      expect(prompt.completion.values).toEqual(['TASK-042', 'TASK-043']);
      const everything = await client.complete({
        ref: { type: 'ref/prompt', name: 'player' },
        argument: { name: 'task_id', value: '' },
      });
      expect(everything.completion.values).toEqual(['OTHER-1', 'TASK-042', 'TASK-043']);
      const resource = await client.complete({
        ref: { type: 'ref/resource', uri: 'coachgate://tasks/{task_id}/review' },
        argument: { name: 'task_id', value: 'O' },
      });
      expect(resource.completion.values).toEqual(['OTHER-1']);
    } finally {
      await close();
    }
  });

  it('answers prompts/get for an unknown task with invalid params (-32602)', async () => {
    repo = greetingProject();
    const { client, close } = await connect({ roots: [repo.dir] });
    try {
      const failure = await client
        .getPrompt({ name: 'player', arguments: { task_id: 'TASK-404' } })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(McpError);
      expect((failure as McpError).code).toBe(-32602);
      expect((failure as McpError).message).toMatch(/No task file for TASK-404/);
    } finally {
      await close();
    }
  });

  it('logs refusals as warnings with structured data, and writes as info, at the level the client set', async () => {
    repo = greetingProject();
    const { client, close } = await connect({ roots: [repo.dir] });
    const messages: LoggingMessageNotification['params'][] = [];
    client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (notification) => void messages.push(notification.params),
    );
    try {
      await client.setLoggingLevel('info');
      const args = { worktree: repo.dir, task_id: 'TASK-042' };
      await callTool(client, 'record_player_report', {
        ...args,
        turn: 1,
        report: { tests_passed: true, files_created: ['src/greet.js'] },
      });
      const refused = await callTool(client, 'record_verdict', {
        ...args,
        turn: 1,
        decision: 'approve',
        rationale: 'trust me',
      });
      expect(refused.isError).toBe(true);
      const refusal = refused._meta?.[REFUSAL_META] as { message: string; reasons: string[] };
      expect(refusal.message).toMatch(/Approval refused/);
      expect(refusal.reasons.length).toBeGreaterThan(0);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(messages).toContainEqual(
        expect.objectContaining({
          level: 'info',
          logger: 'coachgate',
          data: expect.objectContaining({ tool: 'record_player_report' }),
        }),
      );
      expect(messages).toContainEqual(
        expect.objectContaining({
          level: 'warning',
          data: expect.objectContaining({ tool: 'record_verdict', reasons: refusal.reasons }),
        }),
      );

      await client.setLoggingLevel('error');
      const before = messages.length;
      await callTool(client, 'load_task', { worktree: repo.dir, task_id: 'CON' });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(messages).toHaveLength(before);
    } finally {
      await close();
    }
  });
});
