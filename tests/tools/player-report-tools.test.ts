import path from 'node:path';
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import { makeRepo, SAMPLE_TASK, type TempRepo } from '../helpers/git-repo.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

let repo: TempRepo;
let client: Client;
let close: () => Promise<void>;
const resultsFile = '.guardkit/autobuild/TASK-001/task_work_results.json';

beforeEach(async () => {
  repo = makeRepo({
    '.guardkit/tasks/TASK-001.md': SAMPLE_TASK,
    'src/greet.py': 'def greet(n):\n    return f"Hello, {n}!"\n',
  });
  ({ client, close } = await connect({ roots: [repo.dir] }));
});
afterEach(async () => {
  await close();
  repo.remove();
});

const report = {
  files_modified: ['src/greet.py'],
  files_created: ['tests/test_greet.py'],
  tests_written: ['tests/test_greet.py'],
  tests_passed: true,
  implementation_notes: 'added greet',
  concerns: [],
  requirements_addressed: ['AC-001'],
  requirements_remaining: ['AC-002'],
};

describe('read_task_work_results', () => {
  it('normalises the original AutoBuild shape and de-duplicates absolute and relative spellings', async () => {
    repo.write('tests/test_greet.py', 'def test_x():\n    assert True\n');
    repo.write(
      resultsFile,
      JSON.stringify({
        test_results: { all_passed: true, total: 2, passed: 2, failed: 0 },
        coverage: { line: 91, threshold_met: true },
        code_review: { score: 82 },
        plan_audit: { violations: 0 },
        requirements_met: ['AC-001'],
        files_modified: [
          path.join(repo.dir, 'src/greet.py'),
          './src/greet.py',
          'src/../src/greet.py',
        ],
        tests_written: ['tests/test_greet.py', `${repo.dir}/tests/test_greet.py`],
      }),
    );
    const data = dataOf(
      await callTool(client, 'read_task_work_results', { worktree: repo.dir, task_id: 'TASK-001' }),
    );
    expect(data.found).toBe(true);
    expect(data.claims.files_modified).toEqual(['src/greet.py']);
    expect(data.claims.tests_written).toEqual(['tests/test_greet.py']);
    expect(data.reported_gates).toEqual({
      tests_all_passed: true,
      tests_passed: 2,
      tests_failed: 0,
      coverage_percent: 91,
      coverage_met: true,
      arch_review_score: 82,
      plan_audit_violations: 0,
    });
    expect(data.honesty).toEqual({ verified: true, missing_files: [] });
  });

  it('reads the GuardKit shape and catches claimed files that do not exist', async () => {
    repo.write(
      resultsFile,
      JSON.stringify({
        quality_gates: {
          all_passed: true,
          tests_passed: 5,
          tests_failed: 0,
          coverage: 88.5,
          coverage_met: true,
        },
        requirements_addressed: ['Empty names raise a ValueError'],
        completion_promises: [
          {
            criterion_id: 'AC-001',
            status: 'complete',
            test_file: 'tests/test_greet.py',
            implementation_files: ['src/greet.py'],
          },
        ],
        files_created: ['src/validators.py', '../outside.py'],
      }),
    );
    const result = await callTool(client, 'read_task_work_results', {
      worktree: repo.dir,
      task_id: 'TASK-001',
    });
    const data = dataOf(result);
    expect(data.claims.requirements_met).toEqual(['Empty names raise a ValueError', 'AC-001']);
    expect(data.honesty.verified).toBe(false);
    expect(data.honesty.missing_files).toEqual(['src/validators.py', 'tests/test_greet.py']);
    expect(data.problems).toEqual(['../outside.py is outside the worktree']);
    expect(textOf(result)).toMatch(/2 claimed file\(s\) do not exist/);
  });

  it('reports malformed JSON with line and column instead of crashing', async () => {
    repo.write(
      resultsFile,
      '{\n  "files_created": ["a.py"],\n  "test_results": { all_passed: true }\n}\n',
    );
    const data = dataOf(
      await callTool(client, 'read_task_work_results', { worktree: repo.dir, task_id: 'TASK-001' }),
    );
    expect(data.found).toBe(true);
    expect(data.results).toBeNull();
    expect(data.problems[0]).toMatch(/task_work_results\.json: invalid JSON at line 3, column \d+/);
  });

  it('says found: false when the Player reported nothing', async () => {
    const result = await callTool(client, 'read_task_work_results', {
      worktree: repo.dir,
      task_id: 'TASK-001',
    });
    expect(dataOf(result).found).toBe(false);
    expect(textOf(result)).toMatch(/No Player report for TASK-001/);
  });
});

describe('record_player_report', () => {
  it('records turns in order, is idempotent for an identical re-send and refuses a rewrite', async () => {
    const first = dataOf(
      await callTool(client, 'record_player_report', {
        worktree: repo.dir,
        task_id: 'TASK-001',
        turn: 1,
        report,
      }),
    );
    expect(first).toEqual({
      recorded: true,
      already_recorded: false,
      turn: 1,
      path: '.guardkit/autobuild/TASK-001/player_turn_1.json',
    });
    const stored = JSON.parse(readFileSync(path.join(repo.dir, first.path), 'utf8'));
    expect(stored).toMatchObject({
      task_id: 'TASK-001',
      turn: 1,
      tests_passed: true,
      requirements_addressed: ['AC-001'],
    });

    const reordered = Object.fromEntries(Object.entries(report).reverse());
    const again = dataOf(
      await callTool(client, 'record_player_report', {
        worktree: repo.dir,
        task_id: 'TASK-001',
        turn: 1,
        report: reordered,
      }),
    );
    expect(again).toMatchObject({ recorded: false, already_recorded: true });
    expect(readFileSync(path.join(repo.dir, first.path), 'utf8')).toBe(
      JSON.stringify(stored, null, 2) + '\n',
    );

    const rewrite = await callTool(client, 'record_player_report', {
      worktree: repo.dir,
      task_id: 'TASK-001',
      turn: 1,
      report: { ...report, tests_passed: false },
    });
    expect(rewrite.isError).toBe(true);
    expect(textOf(rewrite)).toMatch(
      /already recorded with a different report.*send the next turn, 2/,
    );

    const skip = await callTool(client, 'record_player_report', {
      worktree: repo.dir,
      task_id: 'TASK-001',
      turn: 3,
      report,
    });
    expect(textOf(skip)).toMatch(/out of order.*Send turn 2/);
  });

  it('rejects a report missing required fields with the field name', async () => {
    const result = await callTool(client, 'record_player_report', {
      worktree: repo.dir,
      task_id: 'TASK-001',
      turn: 1,
      report: { files_modified: 'src/greet.py' },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/files_modified|tests_passed/);
  });

  it('reads whichever report the Player wrote last', async () => {
    repo.write('tests/test_greet.py', 'def test_x():\n    assert True\n');
    repo.write(resultsFile, JSON.stringify({ test_results: { all_passed: false, failed: 2 } }));
    const { utimesSync } = await import('node:fs');
    utimesSync(
      path.join(repo.dir, resultsFile),
      new Date(Date.now() - 60_000),
      new Date(Date.now() - 60_000),
    );
    await callTool(client, 'record_player_report', {
      worktree: repo.dir,
      task_id: 'TASK-001',
      turn: 1,
      report,
    });
    expect(
      dataOf(
        await callTool(client, 'read_task_work_results', {
          worktree: repo.dir,
          task_id: 'TASK-001',
        }),
      ),
    ).toMatchObject({ source: 'player_turn', reported_gates: { tests_all_passed: true } });
    repo.write(resultsFile, JSON.stringify({ test_results: { all_passed: false, failed: 2 } }));
    expect(
      dataOf(
        await callTool(client, 'read_task_work_results', {
          worktree: repo.dir,
          task_id: 'TASK-001',
        }),
      ),
    ).toMatchObject({ source: 'task_work_results', reported_gates: { tests_all_passed: false } });
  });

  it('feeds read_task_work_results when no task_work_results.json exists', async () => {
    repo.write('tests/test_greet.py', 'def test_x():\n    assert True\n');
    await callTool(client, 'record_player_report', {
      worktree: repo.dir,
      task_id: 'TASK-001',
      turn: 1,
      report,
    });
    const data = dataOf(
      await callTool(client, 'read_task_work_results', { worktree: repo.dir, task_id: 'TASK-001' }),
    );
    expect(data).toMatchObject({
      found: true,
      source: 'player_turn',
      path: '.guardkit/autobuild/TASK-001/player_turn_1.json',
    });
    expect(data.honesty.verified).toBe(true);
  });
});

describe('verify_quality_gates', () => {
  it('uses thresholds from the base commit, not from a config the Player edited', async () => {
    repo.write('.guardkit/config.yaml', 'coachgate:\n  arch_review_min: 80\n');
    repo.commit('config');
    repo.git('checkout', '-q', '-b', 'autobuild/TASK-001');
    repo.write('.guardkit/config.yaml', 'coachgate:\n  arch_review_min: 10\n');
    repo.write(
      resultsFile,
      JSON.stringify({
        test_results: { all_passed: true, passed: 3, failed: 0 },
        code_review: { score: 65 },
      }),
    );
    const data = dataOf(
      await callTool(client, 'verify_quality_gates', { worktree: repo.dir, task_id: 'TASK-001' }),
    );
    expect(data.thresholds.arch_review_min).toBe(80);
    expect(data.arch_review_passed).toBe(false);
    expect(data.tests_passed).toBe(true);
    expect(data.failed_gates).toEqual(['arch_review: score 65 against a minimum of 80']);
  });

  it('says a corrupt report is corrupt, with the line and column, not that nothing was reported', async () => {
    repo.write(resultsFile, '{\n  "tests_passed": true,\n  "files_created": [oops]\n}\n');
    const result = await callTool(client, 'verify_quality_gates', {
      worktree: repo.dir,
      task_id: 'TASK-001',
    });
    expect(dataOf(result).all_gates_passed).toBe(false);
    expect(textOf(result)).toMatch(
      /tests: The Player report \.guardkit\/autobuild\/TASK-001\/task_work_results\.json is corrupt: invalid JSON at line 3, column 21/,
    );
    expect(textOf(result)).not.toMatch(/no test results reported/);
    // One sentence, said once: no doubled full stop, no repeat of the problem.
    expect(textOf(result)).toMatch(/column 21: Unexpected token 'o'\.$/);
    const read = textOf(
      await callTool(client, 'read_task_work_results', { worktree: repo.dir, task_id: 'TASK-001' }),
    );
    expect(read.match(/line 3, column 21/g)).toHaveLength(1);
  });

  it('refuses unknown criterion ids in a report and in evidence, listing the valid ones', async () => {
    const refused = await callTool(client, 'record_player_report', {
      worktree: repo.dir,
      task_id: 'TASK-001',
      turn: 1,
      report: { ...report, requirements_addressed: ['AC-001', 'AC-009'] },
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(
      /names "AC-009", which TASK-001 does not have\. Use one of: AC-001 \(/,
    );
    const remaining = await callTool(client, 'record_player_report', {
      worktree: repo.dir,
      task_id: 'TASK-001',
      turn: 1,
      report: { ...report, requirements_remaining: ['AC-010'] },
    });
    expect(textOf(remaining)).toMatch(/names "AC-010", which TASK-001 does not have/);
    expect(existsSync(path.join(repo.dir, '.guardkit/autobuild/TASK-001/player_turn_1.json'))).toBe(
      false,
    );
    const evidence = await callTool(client, 'validate_requirements', {
      worktree: repo.dir,
      task_id: 'TASK-001',
      evidence: [
        { criterion: 'AC-001', file: 'src/greet.py', line: 2 },
        { criterion: 'AC-404', file: 'src/greet.py', line: 1 },
      ],
    });
    expect(evidence.isError).toBe(true);
    expect(textOf(evidence)).toMatch(/evidence\[\]\.criterion names "AC-404".*Use one of: AC-001/);
  });

  it('refuses a feedback issue with a key the record would drop, and records it without', async () => {
    const issue = { severity: 'must_fix', category: 'correctness', description: 'greet says Hi' };
    const feedback = (issues: object[]) =>
      callTool(client, 'record_verdict', {
        worktree: repo.dir,
        task_id: 'TASK-001',
        turn: 1,
        decision: 'feedback',
        rationale: 'greet is wrong',
        issues,
      });
    const refused = await feedback([{ ...issue, requirement: 'AC-404' }]);
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/Unrecognized key: "requirement" at issues\[0\]/);
    expect(existsSync(path.join(repo.dir, '.guardkit/autobuild/TASK-001/verdicts.jsonl'))).toBe(
      false,
    );
    const recorded = await feedback([{ ...issue, description: `AC-001: ${issue.description}` }]);
    expect(dataOf(recorded)).toMatchObject({ status: 'in_progress', strikes: 1 });
  });

  it('fails the tests gate when there is no report at all', async () => {
    const result = await callTool(client, 'verify_quality_gates', {
      worktree: repo.dir,
      task_id: 'TASK-001',
    });
    const data = dataOf(result);
    expect(data.all_gates_passed).toBe(false);
    expect(data.problems[0]).toMatch(/No Player report/);
    expect(textOf(result)).toMatch(/tests: no test results reported/);
  });

  it('reports an invalid base-commit config as an error naming the key', async () => {
    repo.write('.guardkit/config.yaml', 'coachgate:\n  max_strikes: -1\n');
    repo.commit('bad config');
    const result = await callTool(client, 'verify_quality_gates', {
      worktree: repo.dir,
      task_id: 'TASK-001',
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/coachgate\.max_strikes/);
  });
});

describe('reports that claim too many files', () => {
  const many = (count: number, prefix = 'src/f') =>
    Array.from({ length: count }, (_, index) => `${prefix}${index}.py`);

  it('record_player_report refuses 300000 files with a clear message; the session stays usable', async () => {
    const task = { worktree: repo.dir, task_id: 'TASK-001' };
    const refused = await callTool(client, 'record_player_report', {
      ...task,
      turn: 1,
      report: { ...report, files_created: many(300_000) },
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(
      /lists more than 5000 files: name the files this turn created or changed, not the whole tree at report\.files_created/,
    );
    expect(
      dataOf(await callTool(client, 'record_player_report', { ...task, turn: 1, report })),
    ).toMatchObject({ recorded: true });
  });

  it('read_task_work_results refuses a file claiming 300000 files, or 20000+ through promises', async () => {
    const task = { worktree: repo.dir, task_id: 'TASK-001' };
    repo.write(resultsFile, JSON.stringify({ files_created: many(300_000) }));
    const listed = dataOf(await callTool(client, 'read_task_work_results', task));
    expect(listed.results).toBeNull();
    expect(listed.problems.join('\n')).toMatch(/files_created: lists more than 5000 files/);

    const promises = Array.from({ length: 5 }, (_, index) => ({
      criterion_id: `AC-00${index}`,
      implementation_files: many(4_500, `p${index}/f`),
    }));
    repo.write(resultsFile, JSON.stringify({ completion_promises: promises }));
    const promised = dataOf(await callTool(client, 'read_task_work_results', task));
    expect(promised.message).toMatch(/claims 22500 files; coachgate checks at most 20000/);
    expect(promised.honesty.verified).toBe(false);
    // The server still answers on the same session.
    expect(dataOf(await callTool(client, 'load_task', task)).task_id).toBe('TASK-001');
  });
});
