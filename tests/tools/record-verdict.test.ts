import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { CoachTurnRecordSchema } from '../../src/verdicts/coach-turn.js';
import { PlayerReportSchema } from '../../src/tasks/player-report.js';
import { taskRecordFile } from '../../src/records/mirrored.js';
import { savePlayerTurn } from '../../src/records/player-turns.js';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import type { TempRepo } from '../helpers/git-repo.js';
import { BAD_GREET, greetingProject } from '../helpers/node-project.js';

let repo: TempRepo;
let client: Client;
let close: () => Promise<void>;
afterEach(async () => {
  await close?.();
  repo?.remove();
});

const TASK = 'TASK-042';
const GOOD_EVIDENCE = [
  { criterion: 'AC-001', file: 'src/greet.js', line: 3, snippet: 'return `Hello, ${name}!`;' },
  { criterion: 'AC-002', test: 'rejects empty names' },
];

async function setup(greet?: string, config?: string) {
  repo = greetingProject(greet, config);
  ({ client, close } = await connect({ roots: [repo.dir] }));
  await callTool(client, 'record_player_report', {
    worktree: repo.dir,
    task_id: TASK,
    turn: 1,
    report: {
      files_created: ['src/greet.js', 'test/greet.test.js'],
      tests_written: ['test/greet.test.js'],
      tests_passed: true,
      requirements_addressed: ['AC-001', 'AC-002'],
    },
  });
}

const call = (name: string, args: Record<string, unknown>) =>
  callTool(client, name, { worktree: repo.dir, task_id: TASK, ...args });
const runTests = async () => dataOf(await call('run_independent_tests', {}));
const approve = (args: Record<string, unknown> = {}) =>
  call('record_verdict', {
    turn: 1,
    decision: 'approve',
    rationale: 'looks done',
    evidence: GOOD_EVIDENCE,
    ...args,
  });
const feedback = (turn: number, extra: Record<string, unknown> = {}) =>
  call('record_verdict', {
    turn,
    decision: 'feedback',
    rationale: `turn ${turn}: still wrong`,
    issues: [
      {
        severity: 'must_fix',
        category: 'tests',
        description: 'greeting is wrong',
        location: 'src/greet.js:3',
        suggestion: 'return Hello, <name>!',
      },
    ],
    ...extra,
  });

function verdictLog(): {
  kind: string;
  decision: string;
  status: string;
  strikes: number;
  seq: number;
}[] {
  return readFileSync(path.join(repo.dir, '.guardkit/autobuild', TASK, 'verdicts.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
}

async function refusal(args: Record<string, unknown> = {}): Promise<string> {
  const result = await approve(args);
  expect(result.isError, textOf(result)).toBe(true);
  expect(existsSync(path.join(repo.dir, '.guardkit/autobuild', TASK, 'coach_turn_1.json'))).toBe(
    false,
  );
  return textOf(result);
}

describe('record_verdict approval guard', () => {
  it('approves when the server can confirm everything, and writes the turn, the log and review.md', async () => {
    await setup();
    await runTests();
    const data = dataOf(await approve());
    expect(data).toMatchObject({
      recorded: true,
      status: 'approved',
      strikes: 0,
      path: `.guardkit/autobuild/${TASK}/coach_turn_1.json`,
      feedback_for_player: '',
    });
    expect(data.requirements_status.map((c: { status: string }) => c.status)).toEqual([
      'verified',
      'verified',
    ]);
    const review = readFileSync(path.join(repo.dir, data.review_path), 'utf8');
    expect(review).toMatch(/^Verdict: APPROVED$/m);
    expect(review).toMatch(/src\/greet\.js:3/);
    const turn = JSON.parse(readFileSync(path.join(repo.dir, data.path), 'utf8'));
    expect(turn).toMatchObject({
      decision: 'approve',
      validation_results: { latest_run: { status: 'passed', fresh: true } },
    });
    expect(CoachTurnRecordSchema.safeParse(turn).success).toBe(true);
  });

  it('refuses without a stored run', async () => {
    await setup();
    expect(await refusal()).toMatch(/no independent test run is stored.*run_independent_tests/);
    expect(verdictLog()).toMatchObject([{ kind: 'refused_approval', strikes: 0 }]);
  });

  it('refuses after a failed run, naming the status and the failure class', async () => {
    await setup(BAD_GREET);
    await runTests();
    expect(await refusal()).toMatch(
      /has status "failed" \(1 failed, 0 errors, failure class code\)/,
    );
  });

  it('refuses a no_tests run', async () => {
    await setup();
    repo.write('test/greet.test.js', '// tests removed\n');
    await runTests();
    expect(await refusal({ evidence: [GOOD_EVIDENCE[0]] })).toMatch(/status "no_tests"/);
  });

  it('refuses a stale run: the worktree changed after the tests ran', async () => {
    await setup();
    await runTests();
    repo.write(
      'src/greet.js',
      readFileSync(path.join(repo.dir, 'src/greet.js'), 'utf8') + '// edited after the run\n',
    );
    expect(await refusal()).toMatch(
      /worktree changed after test run .*Call run_independent_tests again/,
    );
  });

  it('refuses a stale run when one byte inside a large file changed, its size and times kept', async () => {
    await setup();
    // Larger than the fingerprint reads at once: it is streamed through the hash.
    const data = path.join(repo.dir, 'fixtures/table.bin');
    mkdirSync(path.dirname(data), { recursive: true });
    writeFileSync(data, Buffer.alloc(9 * 1024 * 1024, 'a'));
    await runTests();
    const { atime, mtime } = statSync(data);
    const file = openSync(data, 'r+');
    writeSync(file, 'b', 5 * 1024 * 1024);
    closeSync(file);
    utimesSync(data, atime, mtime);
    expect(await refusal()).toMatch(/worktree changed after test run/);
  });

  it('refuses a criterion nobody verified', async () => {
    await setup();
    await runTests();
    expect(await refusal({ evidence: [GOOD_EVIDENCE[0]] })).toMatch(
      /criterion AC-002 is not verified \(claimed without evidence/,
    );
  });

  it('refuses evidence pointing past the end of a file, a wrong snippet, and a test that did not pass', async () => {
    await setup();
    await runTests();
    const text = await refusal({
      evidence: [
        { criterion: 'AC-001', file: 'src/greet.js', line: 40 },
        { criterion: 'AC-002', file: 'src/greet.js', line: 2, snippet: 'throw new RangeError' },
        { criterion: 'AC-002', test: 'rejects null names' },
      ],
    });
    expect(text).toMatch(/AC-001 is not verified.*line 40 is beyond the end of src\/greet\.js/);
    expect(text).toMatch(/AC-002 is not verified.*snippet/);
    expect(text).toMatch(/rejects null names/);
  });

  it('refuses when the verdict itself lists a must_fix issue', async () => {
    await setup();
    await runTests();
    expect(
      await refusal({
        issues: [{ severity: 'must_fix', category: 'security', description: 'logs the name' }],
      }),
    ).toMatch(/lists 1 must_fix issue\(s\) \(logs the name\)/);
  });

  it('names every reason of a refusal longer than its text allows, each whole in review.md', async () => {
    repo = greetingProject();
    ({ client, close } = await connect({ roots: [repo.dir] }));
    // 120 files claimed that do not exist: one reason several times the text's 2,000 characters.
    const claimed = Array.from({ length: 120 }, (_, n) => `src/generated/handler_${n}_of_many.js`);
    await call('record_player_report', {
      turn: 1,
      report: { files_created: claimed, tests_passed: true, requirements_addressed: ['AC-001'] },
    });
    const result = await approve({
      issues: [{ severity: 'must_fix', category: 'security', description: 'logs the name' }],
    });
    const text = textOf(result);
    expect(text.length).toBeLessThanOrEqual(2_000);
    expect(text).toMatch(/no independent test run is stored/);
    expect(text).toMatch(/claims files that do not exist: src\/generated\/handler_0_of_many\.js/);
    expect(text).toMatch(/… \(\d+ more characters\)/);
    // The reason after the long one, which a plain cut at 2,000 characters dropped.
    expect(text).toMatch(/lists 1 must_fix issue\(s\) \(logs the name\)/);
    const whole = (result._meta?.['coachgate/refusal'] as { reasons: string[] }).reasons;
    expect(whole.join('\n')).toContain('src/generated/handler_119_of_many.js');
    const review = readFileSync(
      path.join(repo.dir, '.guardkit/autobuild', TASK, 'review.md'),
      'utf8',
    );
    expect(review).toContain('src/generated/handler_119_of_many.js');
  });

  it('refuses while check_test_integrity has a must_fix finding the trusted run does not settle', async () => {
    await setup();
    const taskFile = path.join(repo.dir, '.guardkit/tasks/backlog/TASK-042.md');
    writeFileSync(taskFile, readFileSync(taskFile, 'utf8').replace('with a TypeError', 'somehow'));
    await runTests();
    expect(await refusal()).toMatch(
      /test integrity: task_file_modified in \.guardkit\/tasks\/backlog\/TASK-042\.md/,
    );
  });

  it("does not refuse a focus on the Player's own new test once the trusted run exists (should_fix)", async () => {
    await setup();
    repo.write(
      'test/greet.test.js',
      readFileSync(path.join(repo.dir, 'test/greet.test.js'), 'utf8').replace(
        "test('greets by name'",
        "test.only('greets by name'",
      ),
    );
    await runTests();
    expect(dataOf(await approve())).toMatchObject({ status: 'approved' });
  });

  it('blocks the task after max_strikes feedback verdicts and refuses approval of a blocked task', async () => {
    await setup(BAD_GREET);
    await runTests();
    // The Player changes something every turn, so only the strike limit can block the task.
    const playerTurn = (turn: number) => repo.write('src/notes.js', `// attempt ${turn}\n`);
    for (const turn of [1, 2]) {
      playerTurn(turn);
      expect(dataOf(await feedback(turn))).toMatchObject({ status: 'in_progress', strikes: turn });
    }
    playerTurn(3);
    const third = dataOf(await feedback(3));
    expect(third).toMatchObject({ status: 'blocked', strikes: 3, max_strikes: 3 });
    expect(third.feedback_for_player).toMatch(/greeting is wrong[\s\S]*src\/greet\.js:3/);
    const review = readFileSync(path.join(repo.dir, third.review_path), 'utf8');
    expect(review).toMatch(/TASK BLOCKED/);
    expect(review).toMatch(/^Verdict: NOT_APPROVED$/m);
    const blocked = await approve({ turn: 4 });
    expect(textOf(blocked)).toMatch(/task is blocked/);
    expect(textOf(await feedback(4))).toMatch(/is blocked/);
  });

  it('gives the Player the error context from the latest run, not just "tests failed"', async () => {
    await setup(BAD_GREET);
    await runTests();
    const data = dataOf(
      await call('record_verdict', { turn: 1, decision: 'feedback', rationale: 'tests fail' }),
    );
    expect(data.feedback_for_player).toMatch(/Hello, Ada!/);
    expect(data.feedback_for_player).toMatch(/greets by name/);
  });

  it('refuses a second verdict for the same turn', async () => {
    await setup(BAD_GREET);
    await feedback(1);
    expect(textOf(await feedback(1))).toMatch(
      /Turn 1 of TASK-042 already has a verdict.*record turn 2/,
    );
  });
});

describe('verdict history', () => {
  it('reports an edited mirror entry as tampering and keeps deciding from the server copy', async () => {
    await setup(BAD_GREET);
    await feedback(1);
    const file = path.join(repo.dir, '.guardkit/autobuild', TASK, 'verdicts.jsonl');
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace('"decision":"feedback"', '"decision":"approve"'),
    );
    const status = dataOf(await call('task_status', {}));
    expect(status.verdict_chain).toMatchObject({ intact: true, entries: 1 });
    expect(status.status).toBe('in_progress');
    expect(status.mirror_tampering).toEqual([
      {
        file: `.guardkit/autobuild/${TASK}/verdicts.jsonl`,
        entry: 'line 1 (seq 1)',
        difference: 'field decision: server "feedback", mirror "approve"',
      },
    ]);
    // The next record call restores the mirror from the server's copy.
    expect(dataOf(await feedback(2)).strikes).toBe(2);
    expect(dataOf(await call('task_status', {})).mirror_tampering).toEqual([]);
  });

  it('detects an edited entry in the server copy and refuses to record on a broken chain', async () => {
    await setup(BAD_GREET);
    await feedback(1);
    await feedback(2);
    const file = (await taskRecordFile(repo.dir, TASK, 'verdicts.jsonl')).state;
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace('"decision":"feedback"', '"decision":"approve"'),
    );
    const status = dataOf(await call('task_status', {}));
    expect(status.verdict_chain).toMatchObject({ intact: false, entries: 2 });
    expect(status.verdict_chain.problems.join('\n')).toMatch(
      /line 1 \(seq 1, verdict approve turn 1\): has an invalid signature/,
    );
    expect(status.verdict_chain.problems.join('\n')).toMatch(/line 2: prev_sha256/);
    expect(textOf(await feedback(3))).toMatch(
      /No verdict was recorded: the server's record in the state directory, .*verdicts\.jsonl, is damaged/,
    );
  });

  it('loses nothing and keeps strikes consistent when 20 verdicts arrive at once', async () => {
    await setup(BAD_GREET);
    // Ten approvals (refused: no run) and ten feedback verdicts race for the same task.
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        index % 2 === 0 ? approve({ turn: (index >> 1) + 1 }) : feedback((index >> 1) + 1),
      ),
    );
    const log = verdictLog();
    const verdicts = log.filter((entry) => entry.kind === 'verdict');
    expect(log.map((entry) => entry.seq)).toEqual(
      Array.from({ length: log.length }, (_, index) => index + 1),
    );
    // Every approval is refused (no run): by the guard (and logged), or as out of turn order (not logged).
    const approvals = results.filter((_, index) => index % 2 === 0);
    expect(approvals.every((result) => result.isError)).toBe(true);
    const guarded = approvals.filter((result) => /Approval refused/.test(textOf(result))).length;
    expect(log.filter((entry) => entry.kind === 'refused_approval')).toHaveLength(guarded);
    approvals.forEach((result) =>
      expect(textOf(result)).toMatch(
        /Approval refused|is not the turn under review|already has a verdict/,
      ),
    );
    // Feedback stops being recorded once the task blocks; every verdict that was recorded counts one strike.
    expect(verdicts.map((entry) => entry.strikes)).toEqual(verdicts.map((_, index) => index + 1));
    expect(verdicts.length).toBeGreaterThanOrEqual(1);
    expect(verdicts.length).toBeLessThanOrEqual(3);
    const refusedFeedback = results
      .filter((result, index) => index % 2 === 1 && result.isError)
      .map(textOf);
    expect(refusedFeedback).toHaveLength(10 - verdicts.length);
    refusedFeedback.forEach((text) =>
      expect(text).toMatch(/is blocked|is not the turn under review|already has a verdict/),
    );
    const status = dataOf(await call('task_status', {}));
    expect(status).toMatchObject({
      status: verdicts.at(-1)!.status,
      strikes: verdicts.length,
      verdict_chain: { intact: true, entries: log.length },
    });
  }, 120_000);

  it('two feedback calls on one Player turn do not stall the task; a Player turn that changes nothing does', async () => {
    await setup(BAD_GREET, 'coachgate:\n  max_strikes: 10\n');
    await runTests();
    expect(dataOf(await feedback(1)).status).toBe('in_progress');
    // The attack: feedback again at once, without the Player getting a turn (same tree, same failures).
    const again = dataOf(await feedback(2));
    expect(again).toMatchObject({ status: 'in_progress', stall: { stalled: false } });
    expect(dataOf(await feedback(3)).status).toBe('in_progress');
    expect(dataOf(await call('detect_stall', {}))).toMatchObject({ stalled: false });
    expect(dataOf(await call('task_status', {}))).toMatchObject({
      status: 'in_progress',
      strikes: 3,
    });

    // The Player records a turn without changing the code: that is a stall.
    await call('record_player_report', {
      turn: 2,
      report: { tests_passed: true, files_modified: ['src/greet.js'] },
    });
    const stalled = dataOf(await feedback(4, { rationale: 'the Player changed nothing' }));
    expect(stalled).toMatchObject({
      status: 'blocked',
      stall: { stalled: true, reason: 'no_changes', first_stalled_turn: 4 },
    });
    expect(dataOf(await call('detect_stall', {}))).toMatchObject({
      stalled: true,
      reason: 'no_changes',
    });
  });

  it('a Player that records its last allowed turn (1000) leaves the Coach a legal verdict after it', async () => {
    await setup(BAD_GREET, 'coachgate:\n  max_strikes: 10\n');
    // Turns 2-999 stored by the server's own store code (1000 calls through MCP would take minutes).
    for (let turn = 2; turn < 1000; turn++)
      await savePlayerTurn(repo.dir, TASK, {
        ...PlayerReportSchema.parse({ tests_passed: true }),
        task_id: TASK,
        turn,
        recorded_at: new Date().toISOString(),
      });
    dataOf(await call('record_player_report', { turn: 1000, report: { tests_passed: true } }));
    const over = await call('record_player_report', { turn: 1001, report: { tests_passed: true } });
    expect(over.isError).toBe(true);
    expect(textOf(await feedback(999))).toMatch(/the verdict belongs to turn 1000/);
    expect(dataOf(await feedback(1000)).status).toBe('in_progress');
    // No new Player turn can follow: the Coach reviews again without a report, past 1000.
    expect(dataOf(await feedback(1001)).status).toBe('in_progress');
    expect(dataOf(await call('task_status', {}))).toMatchObject({ strikes: 2 });
  });

  it('replays the TASK-DB-003 post-mortem through detect_stall', async () => {
    await setup();
    const failures = [
      'TestUserRepository::test_create',
      'TestOrderRepo::test_insert',
      'TestInvoiceStore::test_save',
      'TestAuditLog::test_write',
      'TestCartRepo::test_add',
      'TestPaymentRepo::test_pay',
      'TestShipRepo::test_ship',
    ];
    const history = failures.map((test, index) => ({
      feedback: `tests/test_db.py::${test} FAILED in ${index + 1}.2${index}s - ConnectionRefusedError: [Errno 111] Connection refused (line ${30 + index})`,
      criteria_passed: 0,
    }));
    history.splice(1, 0, {
      feedback: 'coverage threshold not met (72% < 80%)',
      criteria_passed: 0,
    });
    const stalled = dataOf(await callTool(client, 'detect_stall', { history }));
    expect(stalled).toMatchObject({
      stalled: true,
      reason: 'repeated_feedback',
      first_stalled_turn: 5,
    });
    const improving = dataOf(
      await callTool(client, 'detect_stall', {
        history: history.map((turn, index) => ({ ...turn, criteria_passed: index })),
      }),
    );
    expect(improving.stalled).toBe(false);
  });
});
