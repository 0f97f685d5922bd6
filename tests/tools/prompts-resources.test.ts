import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connect } from '../helpers/mcp.js';
import type { TempRepo } from '../helpers/git-repo.js';
import { BAD_GREET, greetingProject } from '../helpers/node-project.js';

let repo: TempRepo;
afterEach(() => repo?.remove());

describe('MCP prompts and resources', () => {
  it('serves the agent prompts with the requirements and the latest feedback, and the task records as resources', async () => {
    repo = greetingProject(BAD_GREET);
    const { client, close } = await connect({ roots: [repo.dir] });
    const args = { worktree: repo.dir, task_id: 'TASK-042' };
    await callTool(client, 'record_player_report', {
      ...args,
      turn: 1,
      report: { tests_passed: true, files_created: ['src/greet.js'] },
    });
    await callTool(client, 'run_independent_tests', args);
    await callTool(client, 'record_verdict', {
      ...args,
      turn: 1,
      decision: 'feedback',
      rationale: 'wrong greeting',
      issues: [
        {
          severity: 'must_fix',
          category: 'correctness',
          description: 'greet returns "Hi Ada"',
          location: 'src/greet.js:3',
        },
      ],
    });

    const { prompts } = await client.listPrompts();
    expect(prompts.map((prompt) => prompt.name)).toEqual([
      'player',
      'coach',
      'validator',
      'issue-verifier',
      'autobuild',
    ]);
    const player = await client.getPrompt({ name: 'player', arguments: { task_id: 'TASK-042' } });
    const text =
      player.messages[0]!.content.type === 'text' ? player.messages[0]!.content.text : '';
    expect(text).toMatch(/Task TASK-042 in worktree .*, turn 2\./);
    expect(text).toMatch(/AC-002: greet rejects an empty name with a TypeError/);
    expect(text).toMatch(/greet returns "Hi Ada"/);
    const coach = await client.getPrompt({
      name: 'coach',
      arguments: { task_id: 'TASK-042', turn: '1' },
    });
    expect(JSON.stringify(coach.messages)).toMatch(/record_verdict/);

    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual([
      'coachgate://tasks/TASK-042/review',
      'coachgate://tasks/TASK-042/turns',
      'coachgate://tasks/TASK-042/runs',
    ]);
    const review = await client.readResource({ uri: 'coachgate://tasks/TASK-042/review' });
    expect(review.contents[0]).toMatchObject({ mimeType: 'text/markdown' });
    expect(String(review.contents[0]!.text)).toMatch(/^Verdict: NOT_APPROVED$/m);
    const turns = JSON.parse(
      String(
        (await client.readResource({ uri: 'coachgate://tasks/TASK-042/turns' })).contents[0]!.text,
      ),
    );
    expect(turns.player).toHaveLength(1);
    expect(turns.coach[0]).toMatchObject({ decision: 'feedback', strikes: 1 });
    const runs = JSON.parse(
      String(
        (await client.readResource({ uri: 'coachgate://tasks/TASK-042/runs' })).contents[0]!.text,
      ),
    );
    expect(runs[0]).toMatchObject({ status: 'failed' });
    await expect(client.readResource({ uri: 'coachgate://tasks/TASK-404/review' })).rejects.toThrow(
      /No review\.md for TASK-404/,
    );
    await close();
  });
});
