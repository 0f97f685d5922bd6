import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/records/run-record.js';
import type { VerdictLogEntry } from '../../src/verdicts/verdict-entry.js';
import {
  buildDashboard,
  graphView,
  passingOnBaseCode,
  runTurn,
  taskView,
  worktreeLabel,
  type DashboardInput,
  type TaskRecords,
} from '../../src/dashboard/model.js';
import { parseWorktreeList } from '../../src/dashboard/worktree-list.js';

let seq = 0;
function entry(fields: Partial<VerdictLogEntry> & Pick<VerdictLogEntry, 'turn' | 'recorded_at'>) {
  return {
    entry: {
      seq: ++seq,
      kind: 'verdict',
      decision: 'feedback',
      status: 'in_progress',
      strikes: 1,
      rationale: 'r',
      issues: [],
      prev_sha256: '0'.repeat(64),
      key_id: 'k1',
      signature: 's',
      ...fields,
    } as VerdictLogEntry,
    signature_problem: null as string | null,
  };
}

function run(id: string, started_at: string, failing: string[], passed = 2): RunRecord {
  return {
    run_id: id,
    task_id: 'T-1',
    started_at,
    command: ['npm', 'test'],
    detected_by: 'package.json',
    cwd: '/repo',
    status: failing.length ? 'failed' : 'passed',
    exit_code: failing.length ? 1 : 0,
    signal: null,
    timed_out: false,
    cancelled: false,
    duration_ms: 10,
    counts: {
      total: passed + failing.length,
      passed,
      failed: failing.length,
      errors: 0,
      skipped: 0,
    },
    tests: [
      ...failing.map((name) => ({ id: name, status: 'failed' as const })),
      { id: 'ok', status: 'passed' as const },
    ],
    summary: 'summary',
    failure_class: failing.length ? 'code' : 'none',
    advice: '',
    env: { shell: 'sh', path_prefix: [], notes: [] },
    tree_hash: 'h',
    tree_clean: true,
    log_path: '/repo/x.log',
    output_bytes: 1,
    key_id: 'k1',
    signature: 's',
  };
}

const MAIN = { path: '/repo', branch: 'main', this_checkout: true };

function records(fields: Partial<TaskRecords>): TaskRecords {
  return {
    id: 'T-1',
    worktree: MAIN,
    signed: true,
    mirror_tampering: [],
    entries: [],
    player_turns: [],
    coach_turns: [],
    runs: [],
    ...fields,
  };
}

function playerTurn(turn: number, recorded_at: string) {
  return {
    state: 'ok' as const,
    value: {
      task_id: 'T-1',
      turn,
      recorded_at,
      tests_passed: true,
      files_created: ['a.js'],
      files_modified: ['a.js', 'b.js'],
      tests_written: [],
      implementation_notes: 'did it',
      concerns: [],
      requirements_addressed: ['AC-1'],
      requirements_remaining: [],
    },
  };
}

describe('dashboard model: turns', () => {
  it('puts each run in the turn of the first entry recorded after it, later runs in the turn under review', () => {
    const task = records({
      entries: [
        entry({ turn: 1, recorded_at: '2026-01-01T00:00:05Z', kind: 'refused_approval' }),
        entry({ turn: 1, recorded_at: '2026-01-01T00:00:06Z' }),
      ],
      player_turns: [playerTurn(1, '2026-01-01T00:00:00Z')],
    });
    expect(runTurn({ started_at: '2026-01-01T00:00:01Z' }, task)).toBe(1);
    // After turn 1's verdict and before any new Player report: the Coach reviews turn 2 next.
    expect(runTurn({ started_at: '2026-01-01T00:00:09Z' }, task)).toBe(2);
    task.player_turns.push(playerTurn(3, '2026-01-01T00:00:08Z'));
    expect(runTurn({ started_at: '2026-01-01T00:00:09Z' }, task)).toBe(3);
  });

  it("shows each turn's failing set and what was added and fixed since the previous turn with a run", () => {
    const view = taskView(
      records({
        entries: [
          entry({ turn: 1, recorded_at: '2026-01-01T00:01:00Z' }),
          entry({ turn: 2, recorded_at: '2026-01-01T00:02:00Z' }),
          entry({ turn: 3, recorded_at: '2026-01-01T00:03:00Z' }),
        ],
        runs: [
          { state: 'ok', value: run('r1', '2026-01-01T00:00:30Z', ['a', 'b']) },
          { state: 'ok', value: run('r3', '2026-01-01T00:02:30Z', ['b', 'c']) },
          { state: 'problem', name: 'r4.json', problem: 'run r4 has an invalid signature' },
        ],
      }),
      '/repo',
    );
    expect(view.turns.map((turn) => turn.failing)).toEqual([
      { now: ['a', 'b'], added: [], fixed: [] },
      null,
      { now: ['b', 'c'], added: ['c'], fixed: ['a'] },
    ]);
    expect(view.turns[0]!.tests).toEqual({ total: 4, passed: 2, failed: 2, errors: 0, skipped: 0 });
    expect(view.turns[0]!.runs.map((item) => item.run_id)).toEqual(['r1']);
    expect(view.unverified).toEqual([
      { name: 'r4.json', problem: 'run r4 has an invalid signature' },
    ]);
  });

  it('keeps refused approvals with their reasons, integrity findings and signature problems', () => {
    const refused = entry({
      turn: 1,
      recorded_at: '2026-01-01T00:00:05Z',
      kind: 'refused_approval',
      decision: 'approve',
      reasons: [
        'latest test run r1 has status "failed"',
        'test integrity: assertion_removed in t.test.js:3 — an assertion was removed.',
      ],
    });
    refused.signature_problem =
      'has an invalid signature (key k1): it was changed after signing or forged';
    const view = taskView(
      records({
        entries: [
          refused,
          entry({
            turn: 1,
            recorded_at: '2026-01-01T00:00:06Z',
            issues: [
              { severity: 'must_fix', category: 'test-integrity', description: 'skip added' },
            ],
          }),
        ],
        player_turns: [playerTurn(1, '2026-01-01T00:00:00Z')],
      }),
      '/repo',
    );
    const [turn] = view.turns;
    expect(turn!.refused[0]!.reasons).toHaveLength(2);
    expect(turn!.refused[0]!.signature).toEqual({
      signed: false,
      text: 'entry has an invalid signature (key k1): it was changed after signing or forged',
    });
    expect(turn!.integrity).toEqual([
      'test integrity: assertion_removed in t.test.js:3 — an assertion was removed.',
      'must_fix: skip added',
    ]);
    expect(turn!.coach!.signature).toEqual({ signed: true, text: "signed by the server's key k1" });
    expect(turn!.player).toMatchObject({ files: ['a.js', 'b.js'], notes: 'did it' });
  });
});

const input: DashboardInput = {
  root: '/repo',
  state_directory: '/state',
  key_id: 'k1',
  generated_at: 'now',
  worktrees: [MAIN],
  graph: { nodes: [], edges: [], problems: [] },
  tasks: [],
};

describe('dashboard model: graph and board', () => {
  it('places tasks in waves, tasks without records as not started', () => {
    const view = graphView(
      {
        nodes: ['A', 'B', 'C'],
        edges: [
          { from: 'B', to: 'A' },
          { from: 'C', to: 'B' },
          { from: 'C', to: 'GONE' },
        ],
        problems: [],
      },
      new Map([['A', 'approved']]),
    );
    expect(view.nodes.map(({ id, column, status }) => [id, column, status])).toEqual([
      ['A', 0, 'approved'],
      ['B', 1, 'not started'],
      ['C', 2, 'not started'],
    ]);
    expect(view.dangling).toEqual([{ from: 'C', to: 'GONE' }]);
    expect(view.acyclic).toBe(true);
  });

  it('marks cycles and still gives every node a column (a cycle shares one)', () => {
    const view = graphView(
      {
        nodes: ['A', 'B', 'C', 'D'],
        edges: [
          { from: 'A', to: 'B' },
          { from: 'B', to: 'A' },
          { from: 'C', to: 'A' },
          { from: 'D', to: 'D' },
        ],
        problems: [],
      },
      new Map(),
    );
    expect(view.acyclic).toBe(false);
    const at = Object.fromEntries(view.nodes.map((node) => [node.id, node]));
    expect([at.A!.column, at.B!.column, at.C!.column]).toEqual([0, 0, 1]);
    expect([at.A!.in_cycle, at.B!.in_cycle, at.C!.in_cycle, at.D!.in_cycle]).toEqual([
      true,
      true,
      false,
      true,
    ]);
    expect(view.edges.filter((edge) => edge.in_cycle)).toHaveLength(3);
    expect(view.self_loops).toEqual(['D']);
  });

  it('counts tasks by status and names the tampered ones', () => {
    const dashboard = buildDashboard({
      ...input,
      tasks: [
        records({
          id: 'T-1',
          entries: [entry({ turn: 1, recorded_at: 'x', status: 'blocked' })],
          mirror_tampering: [{ file: 'f', entry: 'whole file', difference: 'd' }],
        }),
        records({ id: 'T-2', problem: 'no pinned base' }),
      ],
    });
    expect(dashboard.counts).toEqual({ blocked: 1, unknown: 1 });
    expect(dashboard.tampered_tasks).toEqual(['T-1']);
    expect(dashboard.graph.nodes.map((node) => [node.id, node.status])).toEqual([
      ['T-1', 'blocked'],
      ['T-2', 'unknown'],
    ]);
  });
});

describe('dashboard model: worktrees and state directories', () => {
  it('reads `git worktree list --porcelain`, leaving out a bare repository', () => {
    const listed = [
      'worktree /repo',
      'HEAD 1111111111111111111111111111111111111111',
      'branch refs/heads/main',
      '',
      'worktree /repo/.guardkit/worktrees/TASK-001',
      'HEAD 2222222222222222222222222222222222222222',
      'branch refs/heads/autobuild/TASK-001',
      '',
      'worktree /elsewhere',
      'HEAD 3333333333333333333333333333333333333333',
      'detached',
      '',
      'worktree /bare.git',
      'bare',
      '',
    ].join('\n');
    expect(parseWorktreeList(listed)).toEqual([
      { path: '/repo', branch: 'main' },
      { path: '/repo/.guardkit/worktrees/TASK-001', branch: 'autobuild/TASK-001' },
      { path: '/elsewhere', branch: null },
    ]);
  });

  it('says which worktree each task runs in, relative to the opened checkout', () => {
    const worktree = {
      path: '/repo/.guardkit/worktrees/TASK-001',
      branch: 'autobuild/TASK-001',
      this_checkout: false,
    };
    const dashboard = buildDashboard({
      ...input,
      worktrees: [MAIN, worktree],
      tasks: [records({ id: 'TASK-001', worktree }), records({ id: 'TASK-000' })],
    });
    expect(dashboard.tasks.map((task) => [task.id, task.worktree.label])).toEqual([
      ['TASK-001', '.guardkit/worktrees/TASK-001'],
      ['TASK-000', 'this checkout'],
    ]);
    expect(dashboard.worktrees.map((item) => item.label)).toEqual([
      'this checkout',
      '.guardkit/worktrees/TASK-001',
    ]);
    expect(worktreeLabel('/repo/.guardkit/worktrees/T', '/repo')).toBe('/repo');
    expect(dashboard.notice).toBeNull();
  });

  it('names the state directory when it holds no records of the repository', () => {
    const dashboard = buildDashboard({
      ...input,
      tasks: [records({ signed: false, problem: 'only in the mirror' })],
    });
    expect(dashboard.state_directory).toBe('/state');
    expect(dashboard.notice).toBe('No signed records for this repository in /state.');
    expect(dashboard.tampered_tasks).toEqual([]);
    expect(dashboard.tasks[0]!.signed).toBe(false);
  });

  it('says nothing of the state directory on a fresh repository or during a first run', () => {
    expect(buildDashboard({ ...input, tasks: [] }).notice).toBeNull();
    const running = {
      run_id: '20261207T191200000Z-abcd',
      started_at: '2026-12-07T19:12:00.000Z',
      output_bytes: 12,
      last_output_at: '2026-12-07T19:12:01.000Z',
    };
    const first = buildDashboard({ ...input, tasks: [records({ signed: false, running })] });
    expect(first.notice).toBeNull();
    expect(first.tasks[0]).toMatchObject({ status: 'not started', running, problem: null });
  });

  it("splits the tests passing on the base code into the Player's files and the others", () => {
    const split = passingOnBaseCode({
      taken_from_player: ['src/slug.py'],
      taken_by_acknowledgement: [],
      left_out: [
        { file: 'tests/test_new.py', change: 'added' },
        { file: 'tests/test_gone.py', change: 'deleted' },
      ],
      passing_on_base_code: [
        'tests/test_new.py::test_trivial',
        'tests/test_slug.py::test_existing',
        'tests/test_gone.py::test_kept_elsewhere',
        'a test named without its file',
      ],
    } as unknown as Parameters<typeof passingOnBaseCode>[0]);
    expect(split).toEqual({
      in_player_files: ['tests/test_new.py::test_trivial'],
      others: [
        'tests/test_slug.py::test_existing',
        'tests/test_gone.py::test_kept_elsewhere',
        'a test named without its file',
      ],
    });
    expect(passingOnBaseCode(null)).toBeNull();
  });
});
