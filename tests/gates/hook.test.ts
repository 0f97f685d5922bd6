import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connect, dataOf } from '../helpers/mcp.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import { approveGreeting, greetingProject } from '../helpers/node-project.js';
import { CLI as cli } from '../helpers/cli.js';

let repo: TempRepo;
afterEach(() => repo?.remove());

function hook(event: Record<string, unknown>): { status: number | null; output: any } {
  const result = spawnSync(process.execPath, [cli, 'hook'], {
    input: JSON.stringify(event),
    encoding: 'utf8',
  });
  return { status: result.status, output: result.stdout.trim() ? JSON.parse(result.stdout) : null };
}

function transcript(text: string): string {
  const file = path.join(repo.dir, '..', `${path.basename(repo.dir)}-transcript.jsonl`);
  writeFileSync(
    file,
    [
      JSON.stringify({ type: 'user', message: { content: 'go' } }),
      JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text }] } }),
    ].join('\n'),
  );
  return file;
}

describe('coachgate hook (Claude Code Stop / SubagentStop)', () => {
  it('blocks a completion claim until the gate passes, and lets a turn end that claims nothing', async () => {
    repo = greetingProject();
    const stop = hook({ hook_event_name: 'Stop', cwd: repo.dir });
    expect(stop.status).toBe(0);
    expect(stop.output.decision).toBe('block');
    expect(stop.output.reason).toMatch(
      /coachgate gate FAILS for TASK-042[\s\S]*- task is in_progress, not approved/,
    );
    expect(
      hook({
        hook_event_name: 'SubagentStop',
        cwd: repo.dir,
        transcript_path: transcript('Turn 1 report recorded; over to the Coach.'),
      }).output,
    ).toBeNull();
    expect(
      hook({
        hook_event_name: 'SubagentStop',
        cwd: repo.dir,
        transcript_path: transcript('All acceptance criteria are met. The task is complete.'),
      }).output.decision,
    ).toBe('block');

    const { client, close } = await connect({ roots: [repo.dir] });
    await approveGreeting(client, repo.dir);
    await close();
    expect(hook({ hook_event_name: 'Stop', cwd: repo.dir }).output).toBeNull();
  });

  it('lets a blocked task stop with a message, and stays out of sessions with no task', async () => {
    repo = greetingProject(undefined, 'coachgate:\n  max_strikes: 1\n');
    const { client, close } = await connect({ roots: [repo.dir] });
    dataOf(
      await callTool(client, 'record_verdict', {
        worktree: repo.dir,
        task_id: 'TASK-042',
        turn: 1,
        decision: 'feedback',
        rationale: 'wrong',
        issues: [{ severity: 'must_fix', category: 'tests', description: 'broken' }],
      }),
    );
    await close();
    expect(hook({ hook_event_name: 'Stop', cwd: repo.dir }).output.systemMessage).toMatch(
      /TASK-042 is blocked \(1 feedback verdicts reached max_strikes \(1\)\); escalate to a human/,
    );
    repo.remove();
    repo = makeRepo({ 'README.md': 'no tasks here\n' });
    expect(hook({ hook_event_name: 'Stop', cwd: repo.dir })).toEqual({ status: 0, output: null });
    // On a task branch whose task file is missing the hook reports the problem and does not trap the agent.
    repo.git('checkout', '-q', '-b', 'autobuild/TASK-999');
    const unknown = hook({ hook_event_name: 'Stop', cwd: repo.dir });
    expect(unknown.status).toBe(0);
    expect(unknown.output.systemMessage).toMatch(/^coachgate hook: No task file for TASK-999/);
  });

  it('serves the autobuild prompt: a fresh subagent per turn, the verdict from the records', async () => {
    repo = greetingProject();
    const { client, close } = await connect({ roots: [repo.dir] });
    const prompt = await client.getPrompt({
      name: 'autobuild',
      arguments: { task_id: 'TASK-042', max_turns: '3' },
    });
    await close();
    const text = (prompt.messages[0]!.content as { text: string }).text;
    expect(text).toMatch(/^Run the coachgate AutoBuild loop for TASK-042, at most 3 turns/);
    expect(text).toMatch(/NEW autobuild-player subagent \(never reuse one/);
    expect(text).toMatch(/Its status — not anything a subagent said — decides/);
  });
});
