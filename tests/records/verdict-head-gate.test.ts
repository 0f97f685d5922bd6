import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
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

  it('an older log and head restored together: the coach turn records name the verdicts cut', async () => {
    repo = makeRepo({ '.guardkit/tasks/backlog/TASK-042.md': GREET_TASK });
    const task = { worktree: repo.dir, task_id: TASK };
    const { client, close } = await connect({ roots: [repo.dir] });
    const { state: log } = await taskRecordFile(repo.dir, TASK, 'verdicts.jsonl');
    const head = log.replace(/verdicts\.jsonl$/, 'verdicts-head.json');
    const coachTurn = (turn: number) => log.replace(/verdicts\.jsonl$/, `coach_turn_${turn}.json`);
    const feedback = async (turn: number) => {
      repo.write('a.txt', `turn ${turn}\n`);
      await callTool(client, 'record_player_report', {
        ...task,
        turn,
        report: { tests_passed: true, files_created: ['a.txt'] },
      });
      return callTool(client, 'record_verdict', {
        ...task,
        turn,
        decision: 'feedback',
        rationale: `turn ${turn}: no`,
      });
    };
    try {
      dataOf(await feedback(1));
      // A consistent copy, signed by the server, saved after turn 1.
      copyFileSync(log, `${log}.saved`);
      copyFileSync(head, `${head}.saved`);
      dataOf(await feedback(2));
      dataOf(await feedback(3));
      copyFileSync(`${log}.saved`, log);
      copyFileSync(`${head}.saved`, head);
      expect(dataOf(await callTool(client, 'task_status', task))).toMatchObject({
        strikes: 1,
        verdict_chain: { intact: true },
      });

      const named = (turn: number) =>
        `${coachTurn(turn)} was written for a turn ${turn} verdict after the verdicts.jsonl line`;
      const refused = await callTool(client, 'record_verdict', {
        ...task,
        turn: 3,
        decision: 'approve',
        rationale: 'all good now',
      });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toContain(named(2));
      expect(readFileSync(log, 'utf8')).toBe(readFileSync(`${log}.saved`, 'utf8'));
      const gate = runGate(repo.dir, TASK);
      expect(gate.status).toBe(1);
      expect(gate.stdout).toContain(named(2));
      expect(gate.stdout).toContain(named(3));
    } finally {
      await close();
    }
  });

  it("a turn's record left by a server stopped before its verdict does not refuse that turn's verdict", async () => {
    repo = makeRepo({ '.guardkit/tasks/backlog/TASK-042.md': GREET_TASK });
    const task = { worktree: repo.dir, task_id: TASK };
    const { client, close } = await connect({ roots: [repo.dir] });
    const { state: log } = await taskRecordFile(repo.dir, TASK, 'verdicts.jsonl');
    const coachTurn = (turn: number) => log.replace(/verdicts\.jsonl$/, `coach_turn_${turn}.json`);
    try {
      const verdict = async (turn: number) => {
        repo.write('a.txt', `turn ${turn}\n`);
        await callTool(client, 'record_player_report', {
          ...task,
          turn,
          report: { tests_passed: true, files_created: ['a.txt'] },
        });
        return callTool(client, 'record_verdict', {
          ...task,
          turn,
          decision: 'feedback',
          rationale: `turn ${turn}: no`,
        });
      };
      dataOf(await verdict(1));
      // What a stop between coach_turn_2.json and its log line leaves: the record, no verdict.
      const record = JSON.parse(readFileSync(coachTurn(1), 'utf8'));
      const lastLine = readFileSync(log, 'utf8').trimEnd().split('\n').at(-1)!;
      const { createHash } = await import('node:crypto');
      record.turn = 2;
      record.verdict_log_head = createHash('sha256').update(lastLine).digest('hex');
      writeFileSync(coachTurn(2), JSON.stringify(record));
      expect(dataOf(await verdict(2))).toMatchObject({ strikes: 2 });
      expect(runGate(repo.dir, TASK).stdout).not.toContain('was written for a turn');
    } finally {
      await close();
    }
  });
});
