import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connect, dataOf } from '../helpers/mcp.js';
import { connectOver, TRANSPORTS } from '../helpers/transports.js';
import type { TempRepo } from '../helpers/git-repo.js';
import { BAD_GREET, greetingProject } from '../helpers/node-project.js';

type ResourceReader = Awaited<ReturnType<typeof connect>>['client'];

/** A resource's first content as text; a blob there fails the test. */
async function resourceText(client: ResourceReader, uri: string): Promise<string> {
  const [content] = (await client.readResource({ uri })).contents;
  if (!content || !('text' in content)) throw new Error(`${uri} returned no text content`);
  return content.text;
}

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
    // A Coach whose host gave up on a long call asks again rather than judging without the answer.
    expect(JSON.stringify(coach.messages)).toMatch(
      /When a call times out.*call the same tool again with exactly the same arguments/,
    );

    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual([
      'coachgate://tasks/TASK-042/review',
      'coachgate://tasks/TASK-042/turns',
      'coachgate://tasks/TASK-042/runs',
    ]);
    const review = await client.readResource({ uri: 'coachgate://tasks/TASK-042/review' });
    expect(review.contents[0]).toMatchObject({ mimeType: 'text/markdown' });
    expect(await resourceText(client, 'coachgate://tasks/TASK-042/review')).toMatch(
      /^Verdict: NOT_APPROVED$/m,
    );
    const turns = JSON.parse(await resourceText(client, 'coachgate://tasks/TASK-042/turns'));
    expect(turns.player).toHaveLength(1);
    expect(turns.coach[0]).toMatchObject({ decision: 'feedback', strikes: 1 });
    const { runs } = JSON.parse(await resourceText(client, 'coachgate://tasks/TASK-042/runs'));
    expect(runs[0]).toMatchObject({ status: 'failed' });
    await expect(client.readResource({ uri: 'coachgate://tasks/TASK-404/review' })).rejects.toThrow(
      /No review\.md for TASK-404/,
    );
    await close();
  });
});

describe.each(TRANSPORTS)('records shown by resources and prompts over %s', (transport) => {
  it("come from the server's copy and report an edited mirror file, entry and field", async () => {
    repo = greetingProject(BAD_GREET);
    const { client, close } = await connectOver(transport, repo.dir);
    const args = { worktree: repo.dir, task_id: 'TASK-042' };
    await callTool(client, 'record_player_report', {
      ...args,
      turn: 1,
      report: { tests_passed: true, files_created: ['src/greet.js'] },
    });
    const run = dataOf(await callTool(client, 'run_independent_tests', args));
    dataOf(
      await callTool(client, 'record_verdict', {
        ...args,
        turn: 1,
        decision: 'feedback',
        rationale: 'wrong greeting',
      }),
    );
    const read = (kind: string) => resourceText(client, `coachgate://tasks/TASK-042/${kind}`);
    expect(JSON.parse(await read('turns')).mirror_tampering).toEqual([]);
    expect(await read('review')).not.toMatch(/Mirror tampered/);

    // The Player rewrites its run as passed and the Coach's turn as an approval, in the mirror only.
    const store = path.join(repo.dir, '.guardkit/autobuild/TASK-042');
    const edit = (file: string, change: (record: Record<string, unknown>) => void) => {
      const record = JSON.parse(readFileSync(path.join(store, file), 'utf8'));
      change(record);
      writeFileSync(path.join(store, file), JSON.stringify(record, null, 2));
    };
    edit(`runs/${run.run_id}.json`, (record) => (record.status = 'passed'));
    edit('coach_turn_1.json', (record) => (record.decision = 'approve'));
    const runFinding = {
      file: `.guardkit/autobuild/TASK-042/runs/${run.run_id}.json`,
      entry: `run ${run.run_id}`,
      difference: 'field status: server "failed", mirror "passed"',
    };
    const turnFinding = {
      file: '.guardkit/autobuild/TASK-042/coach_turn_1.json',
      entry: 'coach turn 1',
      difference: 'field decision: server "feedback", mirror "approve"',
    };

    const turns = JSON.parse(await read('turns'));
    expect(turns.coach[0]).toMatchObject({ decision: 'feedback' });
    expect(turns.mirror_tampering).toEqual([turnFinding, runFinding]);
    const runs = JSON.parse(await read('runs'));
    expect(runs.runs[0]).toMatchObject({ run_id: run.run_id, status: 'failed' });
    expect(runs.mirror_tampering).toEqual(turns.mirror_tampering);
    // The same comparison as task_status, not a second one.
    expect(dataOf(await callTool(client, 'task_status', args)).mirror_tampering).toEqual(
      turns.mirror_tampering,
    );
    const review = await read('review');
    expect(review).toMatch(/^## Mirror tampered\n/);
    expect(review).toContain(
      `- ${turnFinding.file} ${turnFinding.entry}: ${turnFinding.difference}`,
    );
    expect(review).toMatch(/^Verdict: NOT_APPROVED$/m);

    for (const name of ['player', 'coach']) {
      const prompt = await client.getPrompt({ name, arguments: { task_id: 'TASK-042' } });
      const text =
        prompt.messages[0]!.content.type === 'text' ? prompt.messages[0]!.content.text : '';
      expect(text, name).toContain('## Mirror tampered');
      expect(text, name).toContain(
        `- ${runFinding.file} ${runFinding.entry}: ${runFinding.difference}`,
      );
    }
    await close();
  });
});
