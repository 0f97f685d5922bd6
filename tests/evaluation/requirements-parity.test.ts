import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import { BAD_GREET, GOOD_GREET, GREET_TASK, GREET_TESTS } from '../helpers/node-project.js';

/**
 * validate_requirements is the Coach's last check before the verdict: it must agree with the approval
 * on the same evidence, fail-to-pass included, and an invalid item must not hide a valid one.
 */
let repo: TempRepo;
afterEach(() => repo?.remove());

describe('validate_requirements agrees with record_verdict', () => {
  it('refuses a cited test that passes on the base code, and a valid item still counts beside an invalid one', async () => {
    // The base already rejects empty names (and greets wrongly): "rejects empty names" passes there.
    repo = makeRepo({
      'package.json': JSON.stringify({ type: 'module', scripts: { test: 'node --test' } }),
      '.guardkit/tasks/backlog/TASK-042.md': GREET_TASK,
      'src/greet.js': BAD_GREET,
    });
    repo.git('checkout', '-q', '-b', 'autobuild/TASK-042');
    repo.write('src/greet.js', GOOD_GREET);
    repo.write('test/greet.test.js', GREET_TESTS);
    const { client, close } = await connect({ roots: [repo.dir] });
    const task = { worktree: repo.dir, task_id: 'TASK-042' };
    try {
      await callTool(client, 'record_player_report', {
        ...task,
        turn: 1,
        report: { tests_passed: true, files_modified: ['src/greet.js'] },
      });
      expect(dataOf(await callTool(client, 'run_independent_tests', task)).status).toBe('passed');
      const cited = [
        { criterion: 'AC-001', test: 'greets by name' },
        { criterion: 'AC-002', test: 'rejects empty names' },
      ];
      const checked = await callTool(client, 'validate_requirements', { ...task, evidence: cited });
      expect(dataOf(checked)).toMatchObject({ all_criteria_met: false, missing: ['AC-002'] });
      expect(textOf(checked)).toMatch(/^1\/2 criteria met; not met: AC-002\./);
      expect(textOf(checked)).toContain('rejects empty names also passes on the base code');
      const refused = await callTool(client, 'record_verdict', {
        ...task,
        turn: 1,
        decision: 'approve',
        rationale: 'verified',
        evidence: cited,
      });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(
        /criterion AC-002 is not verified.*rejects empty names also passes on the base code/,
      );

      // The same invalid item beside code that does it: reported, and the criterion is met.
      const mixed = [
        ...cited,
        {
          criterion: 'AC-002',
          file: 'src/greet.js',
          line: 2,
          snippet: "throw new TypeError('name is required')",
        },
      ];
      const both = await callTool(client, 'validate_requirements', { ...task, evidence: mixed });
      expect(dataOf(both).all_criteria_met).toBe(true);
      expect(textOf(both)).toMatch(
        /^All 2 criteria met\. Evidence that does not hold \(1\): AC-002: test .*rejects empty names also passes/,
      );
      const approved = await callTool(client, 'record_verdict', {
        ...task,
        turn: 1,
        decision: 'approve',
        rationale: 'verified',
        evidence: mixed,
      });
      expect(textOf(approved)).toMatch(/^APPROVED TASK-042/);
    } finally {
      await close();
    }
  }, 120_000);
});
