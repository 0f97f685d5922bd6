import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CLI_SCRIPT, PACKAGE_ROOT } from '../package.js';
import { stateRoot } from '../records/state-directory.js';
import { findOnPath } from '../runner/platform.js';

const EXAMPLE = fileURLToPath(new URL('examples/greeting/', PACKAGE_ROOT));
const CLI = fileURLToPath(CLI_SCRIPT);
const TASK = 'TASK-GREET-001';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the demo reads loose tool JSON
type Data = Record<string, any>;

/**
 * The README's main command: a scripted Player and Coach drive the built server over stdio on the bundled
 * example. Turn 1 the Player claims success with a bug; the server's own run catches it and refuses the
 * approval. Turn 2 the fix lands and the approval is recorded. Returns the exit code.
 */
export async function runDemo(print: (line: string) => void, keep?: string): Promise<number> {
  // --keep DIR: the repository is built in DIR (files already there are committed with the example);
  // otherwise in a scratch directory. Either way it is kept, for `gate` and `coachgate ui` afterwards.
  const scratch = keep ? undefined : mkdtempSync(path.join(os.tmpdir(), 'coachgate-demo-'));
  const worktree = scratch ? path.join(scratch, 'greeting') : path.resolve(keep!);
  if (existsSync(path.join(worktree, '.git'))) {
    process.stderr.write(`coachgate demo: ${worktree} is already a git repository\n`);
    return 2;
  }
  const client = new Client({ name: 'coachgate-demo', version: '1.0.0' });
  try {
    cpSync(EXAMPLE, worktree, {
      recursive: true,
      filter: (source) => !source.startsWith(path.join(EXAMPLE, 'turns')),
    });
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=demo', '-c', 'user.email=demo@example.com', ...args], {
        cwd: worktree,
        stdio: 'pipe',
      });
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('commit', '-q', '-m', 'Greeting task');
    git('checkout', '-q', '-b', `autobuild/${TASK}`);
    print(
      `coachgate demo — example project copied to ${worktree} (task ${TASK}, base branch main)\n`,
    );

    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, '--root', worktree, '--state-dir', stateRoot()],
        stderr: 'ignore',
      }),
    );
    const call = async (
      name: string,
      args: Data = {},
    ): Promise<{ data: Data; text: string; isError: boolean }> => {
      const result = (await client.callTool(
        { name, arguments: { worktree, task_id: TASK, ...args } },
        undefined,
        { timeout: 300_000 },
      )) as CallToolResult;
      const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
      return {
        data: (result.structuredContent ?? {}) as Data,
        text,
        isError: result.isError === true,
      };
    };
    const task = (await call('load_task')).data;
    print(`Task: ${task.title} — ${task.acceptance_criteria.map((c: Data) => c.id).join(', ')}\n`);

    const lines: string[] = [];
    // Turn 1: the Player forgot to trim names but reports every criterion met and its tests passing.
    print('── Turn 1 ──');
    playerTurn(worktree, 1);
    await call('record_player_report', { turn: 1, report: playerReport() });
    print(
      'Player: wrote src/greet.js and test/greet.test.js; claims AC-001..AC-003 met, tests passing.',
    );
    const run1 = (await call('run_independent_tests')).data;
    print(
      `Coach:  server ran the tests itself → ${run1.status.toUpperCase()} (${run1.counts.passed} passed, ${run1.counts.failed} failed); class ${run1.failure_class}`,
    );
    print(indent(rootCause(run1.summary)));
    const refused = await call('record_verdict', {
      turn: 1,
      decision: 'approve',
      rationale: 'The Player says all tests pass.',
      evidence: evidence(1),
    });
    print(
      `Coach:  tried to approve on the Player's word → ${refused.isError ? 'REFUSED by the server:' : 'recorded (unexpected!)'}`,
    );
    print(
      indent(
        refused.text
          .split('\n')
          .filter((line) => line.startsWith('- '))
          .join('\n'),
      ),
    );
    const issues = [
      {
        severity: 'must_fix',
        category: 'correctness',
        description: "AC-003: names are not trimmed — greet('  Ada  ') returns 'Hello,   Ada  !'",
        location: 'src/greet.js:6',
        suggestion:
          'Trim the name once at the top and use the trimmed value for both the check and the greeting.',
      },
    ];
    const feedback = await call('record_verdict', {
      turn: 1,
      decision: 'feedback',
      rationale: 'The independent run fails on trimming (AC-003).',
      issues,
      evidence: evidence(1),
    });
    print(
      `Coach:  feedback recorded → strike ${feedback.data.strikes}/${feedback.data.max_strikes}, status ${feedback.data.status}`,
    );
    print(indent(feedback.data.feedback_for_player.split('\n').slice(0, 8).join('\n')));
    lines.push(
      `Turn 1: Player ✓ report (claims done) / Coach ✗ feedback (${issues.length} issue) — approval refused`,
    );

    // Turn 2: the fix lands; the same tests now pass and the evidence holds.
    print('\n── Turn 2 ──');
    playerTurn(worktree, 2);
    await call('record_player_report', {
      turn: 2,
      report: { ...playerReport(), files_created: [], files_modified: ['src/greet.js'] },
    });
    print('Player: fixed src/greet.js (trims before greeting).');
    const run2 = (await call('run_independent_tests')).data;
    print(
      `Coach:  server ran the tests → ${run2.status.toUpperCase()} (${run2.counts.passed} passed, ${run2.counts.failed} failed)`,
    );
    const integrity = (await call('check_test_integrity')).data;
    print(`Coach:  test integrity → ${integrity.findings.length} finding(s)`);
    const requirements = (await call('validate_requirements', { evidence: evidence(2) })).data;
    print(
      `Coach:  requirements → ${requirements.criteria_met}/${requirements.criteria_total} verified by evidence`,
    );
    const approval = await call('record_verdict', {
      turn: 2,
      decision: 'approve',
      rationale: 'Independent run passes; every criterion has verified evidence.',
      evidence: evidence(2),
    });
    print(
      `Coach:  approve → ${approval.isError ? `REFUSED:\n${approval.text}` : `recorded, status ${approval.data.status}`}`,
    );
    lines.push(
      `Turn 2: Player ✓ report (fix) / Coach ${approval.isError ? '✗ approval refused' : '✓ approved'}`,
    );

    print(`\n── ${approval.data.review_path ?? 'review.md'} ──`);
    if (!approval.isError)
      print(readFileSync(path.join(worktree, approval.data.review_path), 'utf8').trim());
    print('\n── Summary ──');
    lines.forEach((line) => print(line));
    const ok =
      refused.isError &&
      run1.status === 'failed' &&
      !approval.isError &&
      approval.data.status === 'approved';
    print(
      ok
        ? '\nDemo finished: the buggy turn was caught by the server, the fixed turn was approved.'
        : '\nDemo FAILED: the loop did not go as scripted.',
    );
    print(keptDirectoryNote(scratch, worktree, await coachgateCommand()));
    return ok ? 0 : 1;
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** The demo keeps its repository, so the records it prints can be looked at (and gated) afterwards. */
function keptDirectoryNote(scratch: string | undefined, worktree: string, command: string): string {
  return [
    `\nThe example repository is kept in ${worktree}:`,
    `  ls ${path.join(worktree, '.guardkit', 'autobuild', TASK)}     the mirrored records (review.md, verdicts.jsonl, runs/)`,
    `  ${command} gate --task ${TASK} --worktree ${worktree}`,
    `  ${command} ui --root ${worktree}     the dashboard of the loop`,
    `Remove it with: rm -rf ${scratch ?? worktree}`,
  ].join('\n');
}

function playerTurn(worktree: string, turn: number): void {
  cpSync(path.join(EXAMPLE, 'turns', String(turn)), worktree, { recursive: true });
}

function playerReport(): Data {
  const files = ['src/greet.js'];
  return {
    files_created: ['src/greet.js', 'test/greet.test.js'],
    tests_written: ['test/greet.test.js'],
    tests_passed: true,
    implementation_notes: 'greet(name) validates and greets.',
    requirements_addressed: ['AC-001', 'AC-002', 'AC-003'],
    completion_promises: ['AC-001', 'AC-002', 'AC-003'].map((id) => ({
      criterion_id: id,
      status: 'complete',
      test_file: 'test/greet.test.js',
      implementation_files: files,
    })),
  };
}

/** What the Coach found by reading the code and the run: a passing test per criterion, plus a line of code. */
function evidence(turn: 1 | 2): Data[] {
  return [
    { criterion: 'AC-001', test: 'greets by name' },
    { criterion: 'AC-002', test: 'rejects blank names' },
    { criterion: 'AC-003', test: 'trims names before greeting' },
    turn === 1
      ? { criterion: 'AC-001', file: 'src/greet.js', line: 6, snippet: 'return `Hello, ${name}!`;' }
      : { criterion: 'AC-003', file: 'src/greet.js', line: 3, snippet: 'name.trim()' },
  ];
}

/** The first error block of the run summary (it already starts with the root cause). */
function rootCause(summary: string): string {
  return summary
    .split('\n----- final result -----')[0]!
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(0, 8)
    .join('\n');
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => (line.trim() ? `        ${line}` : ''))
    .join('\n');
}

/**
 * How the closing hints spell coachgate so they run as printed: `coachgate` once it is on PATH,
 * else this very CLI through node (right after `npm install && npm run demo` nothing is installed).
 */
async function coachgateCommand(): Promise<string> {
  return (await findOnPath('coachgate')) ? 'coachgate' : `node ${fileURLToPath(CLI_SCRIPT)}`;
}
