import { readFileSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { taskRecordFile } from '../../src/records/mirrored.js';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import { runGate } from '../helpers/gate-cli.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import { GREET_TASK } from '../helpers/node-project.js';

const TASK = 'TASK-042';
let repo: TempRepo;
afterEach(() => repo?.remove());

describe("the verdict log's tail cut in the state directory", () => {
  it('resets no strike: the task is blocked, the next verdict refused, gate fails, naming the head file', async () => {
    repo = makeRepo({ '.guardkit/tasks/backlog/TASK-042.md': GREET_TASK });
    const task = { worktree: repo.dir, task_id: TASK };
    const { client, close } = await connect({ roots: [repo.dir] });
    try {
      for (const turn of [1, 2]) {
        await callTool(client, 'record_player_report', {
          ...task,
          turn,
          report: { tests_passed: true, files_created: ['a.txt'] },
        });
        const verdict = { ...task, turn, decision: 'feedback', rationale: `turn ${turn}: no` };
        expect(dataOf(await callTool(client, 'record_verdict', verdict))).toMatchObject({
          strikes: turn,
        });
      }
      const { state: log } = await taskRecordFile(repo.dir, TASK, 'verdicts.jsonl');
      const head = log.replace(/verdicts\.jsonl$/, 'verdicts-head.json');
      const honest = readFileSync(log, 'utf8');
      // A forged approval appended: the chain breaks, and the task does not read as approved.
      const last = JSON.parse(honest.trimEnd().split('\n').at(-1)!);
      const forged = { ...last, seq: 3, turn: 3, decision: 'approve', status: 'approved' };
      writeFileSync(log, `${honest}${JSON.stringify(forged)}\n`);
      const forgedStatus = dataOf(await callTool(client, 'task_status', task));
      expect(forgedStatus.verdict_chain).toMatchObject({ intact: false, entries: 3 });
      expect(forgedStatus.status).toBe('blocked');
      expect(forgedStatus.block_reason).toContain('its approval does not count');

      // Both strikes removed: what is left is a valid, shorter chain.
      writeFileSync(log, '');
      const cut = `${head} names 2 entries but verdicts.jsonl holds 0`;

      const status = dataOf(await callTool(client, 'task_status', task));
      expect(status).toMatchObject({ status: 'blocked', strikes: 0 });
      expect(status.verdict_chain).toMatchObject({ intact: false });
      expect(status.verdict_chain.problems.join('\n')).toContain(cut);
      const refused = await callTool(client, 'record_verdict', {
        ...task,
        turn: 3,
        decision: 'approve',
        rationale: 'all good now',
      });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toContain(cut);
      expect(readFileSync(log, 'utf8')).toBe('');

      const gate = runGate(repo.dir, TASK);
      expect(gate.status).not.toBe(0);
      expect(gate.stdout + gate.stderr).toContain(cut);
    } finally {
      await close();
    }
  });
});
