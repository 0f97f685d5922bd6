/**
 * The dashboard's view of one repository, built as a pure function over records the server already read
 * and verified (src/dashboard/read.ts): no I/O here, so every rule of the page is testable on plain data.
 */
import path from 'node:path';
import { analyzeGraph, type DependencyEdge, type GraphCycle } from '../graph/graph.js';
import type { CoachTurnRecord } from '../verdicts/coach-turn.js';
import type { PlayerTurnRecord } from '../tasks/player-report.js';
import { failingTests, type RunRecord } from '../records/run-record.js';
import { taskState } from '../verdicts/task-state.js';
import { commandAsTyped } from '../runner/invocation.js';
import type { VerdictLogEntry } from '../verdicts/verdict-entry.js';
import type { taskStatus } from '../actions/task-status.js';
import type { Tampering } from '../records/mirrored.js';
import type { MergedView } from './merged.js';
import type { RunInProgress } from './running.js';
import type { RepositoryWorktree } from './worktree-list.js';

export type TaskStatusView = Awaited<ReturnType<typeof taskStatus>>;

/** A record read from the server's copy, or why it could not be used (corrupt, unsigned, forged). */
export type Checked<T> =
  { state: 'ok'; value: T } | { state: 'problem'; name: string; problem: string };

/** Everything read for one task: `status` is task_status's own view (strikes, stall, chain, tampering). */
export interface TaskRecords {
  id: string;
  /** The worktree the task runs in: its mirror and its tree are the ones compared. */
  worktree: RepositoryWorktree;
  /** Whether the state directory holds records of the task; a mirror alone proves nothing. */
  signed: boolean;
  /** Why the task could not be opened (no pinned base, no key, no task file at the base). */
  problem?: string;
  status?: TaskStatusView;
  mirror_tampering: Tampering[];
  /** Verdict-log entries with the signature check's result (null: signed by the server's key). */
  entries: { entry: VerdictLogEntry; signature_problem: string | null }[];
  player_turns: Checked<PlayerTurnRecord>[];
  coach_turns: Checked<CoachTurnRecord>[];
  /** In the server's own order (the latest run last); a run failing its signature check is a problem. */
  runs: Checked<RunRecord>[];
  /** A run started and not stored yet (src/dashboard/running.ts). */
  running?: RunInProgress | null;
  /** An approval merged by `worktree finish`, as the gate checks it (src/dashboard/merged.ts). */
  merged?: MergedView | null;
}

export interface SignatureView {
  signed: boolean;
  text: string;
}

export interface RunView {
  run_id: string;
  started_at: string;
  status: RunRecord['status'];
  counts: RunRecord['counts'];
  failure_class: RunRecord['failure_class'];
  command: string;
  duration_ms: number;
  summary: string;
  advice: string;
  failing: string[];
  signature: SignatureView;
}

export interface TurnView {
  turn: number;
  player:
    | {
        recorded_at: string;
        tests_passed_claimed: boolean;
        files: string[];
        tests_written: string[];
        notes: string;
        concerns: string[];
        requirements_addressed: string[];
        requirements_remaining: string[];
      }
    | { problem: string }
    | null;
  runs: RunView[];
  /** The turn's last run's counts: one bar of the chart. */
  tests: RunRecord['counts'] | null;
  /** The failing set of the turn's last run and how it changed since the previous turn with a run. */
  failing: { now: string[]; added: string[]; fixed: string[] } | null;
  /** `test integrity:` reasons of refused approvals and the Coach's integrity issues. */
  integrity: string[];
  refused: {
    recorded_at: string;
    rationale: string;
    reasons: string[];
    signature: SignatureView;
  }[];
  coach: {
    decision: string;
    status: string;
    strikes: number;
    recorded_at: string;
    rationale: string;
    feedback: string;
    issues: VerdictLogEntry['issues'];
    run_id: string | null;
    trusted_run: Evaluation | null;
    /** The trusted run's `passing_on_base_code`, split by whether a test's id names a Player's file. */
    passing_on_base_code: PassingOnBaseCode | null;
    stall_reason: string | null;
    signature: SignatureView;
  } | null;
}

type Evaluation = NonNullable<CoachTurnRecord['validation_results']['evaluation']>;

/**
 * The tests that passed when the Player's tests ran on the base code. The list holds the base's own
 * tests too (from the baseline), so only the ids that name a file the Player added or changed are the
 * Player's: those pass without the change. The others are the base's, or ids that name no file.
 */
export interface PassingOnBaseCode {
  in_player_files: string[];
  others: string[];
}

export interface WorktreeView {
  path: string;
  /** `this checkout`, or the path relative to it (absolute when outside it). */
  label: string;
  branch: string | null;
  this_checkout: boolean;
}

export interface TaskView {
  id: string;
  title: string;
  worktree: WorktreeView;
  signed: boolean;
  status: string;
  problem: string | null;
  block_reason: string | null;
  strikes: number;
  max_strikes: number | null;
  stall: TaskStatusView['stall'] | null;
  verdict_chain: TaskStatusView['verdict_chain'] | null;
  base: TaskStatusView['base'] | null;
  base_moved: TaskStatusView['base_moved'];
  latest_run: TaskStatusView['latest_run'];
  running: RunInProgress | null;
  merged: MergedView | null;
  mirror_tampering: Tampering[];
  turns: TurnView[];
  /** Stored runs that failed to load or verify, by name, with the reason. */
  unverified: { name: string; problem: string }[];
}

export interface GraphView {
  nodes: { id: string; column: number; row: number; status: string; in_cycle: boolean }[];
  edges: { from: string; to: string; in_cycle: boolean }[];
  cycles: GraphCycle[];
  self_loops: string[];
  dangling: { from: string; to: string }[];
  problems: string[];
  acyclic: boolean;
}

export interface Dashboard {
  root: string;
  /** The state directory read: the page names it, since another one holds other records. */
  state_directory: string;
  key_id: string | null;
  generated_at: string;
  /** Set when tasks have mirrored records and the state directory read holds none of them. */
  notice: string | null;
  worktrees: WorktreeView[];
  counts: Record<string, number>;
  tampered_tasks: string[];
  graph: GraphView;
  tasks: TaskView[];
}

export interface DashboardInput {
  root: string;
  state_directory: string;
  key_id: string | null;
  generated_at: string;
  worktrees: RepositoryWorktree[];
  graph: { nodes: string[]; edges: DependencyEdge[]; problems: string[] };
  tasks: TaskRecords[];
}

/** Tasks without records appear in the graph (from the task files) as `not started`. */
export const NOT_STARTED = 'not started';

export function buildDashboard(input: DashboardInput): Dashboard {
  const tasks = input.tasks.map((records) => taskView(records, input.root));
  const statusOf = new Map(tasks.map((task) => [task.id, task.status]));
  const counts: Record<string, number> = {};
  for (const task of tasks) counts[task.status] = (counts[task.status] ?? 0) + 1;
  return {
    root: input.root,
    state_directory: input.state_directory,
    key_id: input.key_id,
    generated_at: input.generated_at,
    // A fresh repository (no records anywhere) or a first run still going is no sign of a wrong directory.
    notice:
      tasks.some((task) => task.signed) || !tasks.some((task) => task.problem && !task.signed)
        ? null
        : `No signed records for this repository in ${input.state_directory}.`,
    worktrees: input.worktrees.map((worktree) => worktreeView(worktree, input.root)),
    counts,
    tampered_tasks: tasks.filter((task) => task.mirror_tampering.length > 0).map((task) => task.id),
    graph: graphView(input.graph, statusOf),
    tasks,
  };
}

export function taskView(records: TaskRecords, root: string): TaskView {
  const status = records.status;
  const entries = records.entries.map((item) => item.entry);
  const turns = turnNumbers(records).map((turn) => turnView(turn, records));
  addFailingChanges(turns);
  return {
    id: records.id,
    title: status?.title ?? records.id,
    worktree: worktreeView(records.worktree, root),
    signed: records.signed,
    status:
      status?.status ??
      (entries.length > 0 ? taskState(entries).status : records.running ? NOT_STARTED : 'unknown'),
    problem: records.problem ?? null,
    block_reason: status?.block_reason ?? null,
    strikes: status?.strikes ?? 0,
    max_strikes: status?.max_strikes ?? null,
    stall: status?.stall ?? null,
    verdict_chain: status?.verdict_chain ?? null,
    base: status?.base ?? null,
    base_moved: status?.base_moved ?? null,
    latest_run: status?.latest_run ?? null,
    running: records.running ?? null,
    merged: records.merged ?? null,
    mirror_tampering: records.mirror_tampering,
    turns,
    unverified: records.runs.flatMap((run) =>
      run.state === 'problem' ? [{ name: run.name, problem: run.problem }] : [],
    ),
  };
}

export function worktreeView(worktree: RepositoryWorktree, root: string): WorktreeView {
  return { ...worktree, label: worktreeLabel(root, worktree.path) };
}

/** How the page names a worktree: relative to the opened checkout when inside it. */
export function worktreeLabel(root: string, worktree: string): string {
  const relative = path.relative(root, worktree);
  if (relative === '') return 'this checkout';
  return relative.startsWith('..') || path.isAbsolute(relative) ? worktree : relative;
}

function turnNumbers(records: TaskRecords): number[] {
  const runs = records.runs.flatMap((run) => (run.state === 'ok' ? [run.value] : []));
  return [
    ...new Set([
      ...(records.status?.turns.map((turn) => turn.turn) ?? []),
      ...records.entries.map((item) => item.entry.turn),
      ...runs.map((run) => runTurn(run, records)),
    ]),
  ].sort((a, b) => a - b);
}

/**
 * Runs are not stamped with a turn: a run belongs to the turn of the first verdict-log entry recorded
 * after it started (the verdict or refused approval it informed). A run after the last entry belongs to
 * the turn under review now: the latest Player turn, or the next one (the rule record_verdict applies).
 */
export function runTurn(run: Pick<RunRecord, 'started_at'>, records: TaskRecords): number {
  const entry = records.entries.find((item) => item.entry.recorded_at >= run.started_at);
  if (entry) return entry.entry.turn;
  const lastVerdictTurn = taskState(records.entries.map((item) => item.entry)).last_turn;
  const lastPlayerTurn = Math.max(
    0,
    ...records.player_turns.flatMap((turn) => (turn.state === 'ok' ? [turn.value.turn] : [])),
  );
  return lastPlayerTurn > lastVerdictTurn ? lastPlayerTurn : lastVerdictTurn + 1;
}

function turnView(turn: number, records: TaskRecords): TurnView {
  const entries = records.entries.filter((item) => item.entry.turn === turn);
  const verdict = entries.find((item) => item.entry.kind === 'verdict');
  const refused = entries.filter((item) => item.entry.kind === 'refused_approval');
  const coachTurn = records.coach_turns.find(
    (record) => record.state === 'ok' && record.value.turn === turn,
  );
  const coachRecord = coachTurn?.state === 'ok' ? coachTurn.value : undefined;
  const runs = records.runs.flatMap((run) =>
    run.state === 'ok' && runTurn(run.value, records) === turn ? [run.value] : [],
  );
  const last = runs.at(-1);
  return {
    turn,
    player: playerView(turn, records),
    runs: runs.map(runView),
    tests: last ? last.counts : null,
    failing: last ? { now: failingTests(last), added: [], fixed: [] } : null,
    integrity: [
      ...refused.flatMap((item) =>
        (item.entry.reasons ?? []).filter((reason) => reason.startsWith('test integrity:')),
      ),
      ...(verdict?.entry.issues ?? [])
        .filter((issue) => /integrity/i.test(issue.category))
        .map((issue) => `${issue.severity}: ${issue.description}`),
    ],
    refused: refused.map((item) => ({
      recorded_at: item.entry.recorded_at,
      rationale: item.entry.rationale,
      reasons: item.entry.reasons ?? [],
      signature: signatureView(item.entry, item.signature_problem),
    })),
    coach: verdict
      ? {
          decision: verdict.entry.decision,
          status: verdict.entry.status,
          strikes: verdict.entry.strikes,
          recorded_at: verdict.entry.recorded_at,
          rationale: verdict.entry.rationale,
          feedback: coachRecord?.feedback_for_player ?? '',
          issues: verdict.entry.issues,
          run_id:
            verdict.entry.run_id ?? coachRecord?.validation_results.latest_run?.run_id ?? null,
          trusted_run: coachRecord?.validation_results.evaluation ?? null,
          passing_on_base_code: passingOnBaseCode(coachRecord?.validation_results.evaluation),
          stall_reason: verdict.entry.stall_reason ?? null,
          signature: signatureView(verdict.entry, verdict.signature_problem),
        }
      : null,
  };
}

function playerView(turn: number, records: TaskRecords): TurnView['player'] {
  const record = records.player_turns.find(
    (item) => item.state === 'ok' && item.value.turn === turn,
  );
  if (record?.state === 'ok') {
    const report = record.value;
    return {
      recorded_at: report.recorded_at,
      tests_passed_claimed: report.tests_passed,
      files: [...new Set([...report.files_created, ...report.files_modified])],
      tests_written: report.tests_written,
      notes: report.implementation_notes,
      concerns: report.concerns,
      requirements_addressed: report.requirements_addressed,
      requirements_remaining: report.requirements_remaining,
    };
  }
  const problem = records.status?.turns.find((item) => item.turn === turn)?.player;
  return problem && 'problem' in problem ? { problem: problem.problem } : null;
}

/**
 * Splits `passing_on_base_code` by the files the Player added or changed (those the trusted runs took
 * or left out): a test id starting with one is the Player's, as the trusted runs themselves tell them.
 */
export function passingOnBaseCode(
  evaluation: Evaluation | null | undefined,
): PassingOnBaseCode | null {
  if (!evaluation) return null;
  const files = [
    ...evaluation.taken_from_player,
    ...evaluation.taken_by_acknowledgement,
    ...evaluation.left_out.filter((item) => item.change !== 'deleted').map((item) => item.file),
  ];
  const inPlayerFiles = (id: string) => files.some((file) => id.startsWith(file));
  return {
    in_player_files: evaluation.passing_on_base_code.filter(inPlayerFiles),
    others: evaluation.passing_on_base_code.filter((id) => !inPlayerFiles(id)),
  };
}

/** Each turn's failing set against the previous turn that had a run: what newly fails, what was fixed. */
function addFailingChanges(turns: TurnView[]): void {
  let previous: string[] | null = null;
  for (const turn of turns) {
    if (!turn.failing) continue;
    const before = new Set(previous ?? []);
    const now = new Set(turn.failing.now);
    turn.failing.added = previous === null ? [] : turn.failing.now.filter((id) => !before.has(id));
    turn.failing.fixed = (previous ?? []).filter((id) => !now.has(id));
    previous = turn.failing.now;
  }
}

function runView(run: RunRecord): RunView {
  return {
    run_id: run.run_id,
    started_at: run.started_at,
    status: run.status,
    counts: run.counts,
    failure_class: run.failure_class,
    // As the user would type it, as run_independent_tests says it (the record keeps the argv that ran).
    command: commandAsTyped(run.command),
    duration_ms: run.duration_ms,
    summary: run.summary,
    advice: run.advice,
    failing: failingTests(run),
    // readRun refuses a run whose signature does not verify: one that loads is signed by the server.
    signature: { signed: true, text: `signed by the server's key ${run.key_id ?? ''}`.trim() },
  };
}

function signatureView(entry: VerdictLogEntry, problem: string | null): SignatureView {
  return problem
    ? { signed: false, text: `entry ${problem}` }
    : { signed: true, text: `signed by the server's key ${entry.key_id}` };
}

/**
 * Columns are topological waves (wave 0: no dependencies). A cyclic graph has no waves, so each cycle is
 * first collapsed into one node and the waves of that acyclic graph place every member of a cycle in the
 * same column.
 */
export function graphView(
  graph: DashboardInput['graph'],
  statusOf: Map<string, string>,
): GraphView {
  const nodes = [...new Set([...graph.nodes, ...statusOf.keys()])].sort();
  const report = analyzeGraph({ nodes, edges: graph.edges });
  const cycleOf = new Map<string, string>();
  for (const cycle of report.cycles) for (const id of cycle.nodes) cycleOf.set(id, cycle.nodes[0]!);
  for (const id of report.self_loops) cycleOf.set(id, cycleOf.get(id) ?? id);
  const unit = (id: string) => cycleOf.get(id) ?? id;
  const known = new Set(nodes);
  const edges = graph.edges.filter((edge) => known.has(edge.from) && known.has(edge.to));
  const waves = report.acyclic
    ? report.waves
    : analyzeGraph({
        nodes: [...new Set(nodes.map(unit))],
        edges: edges
          .map((edge) => ({ from: unit(edge.from), to: unit(edge.to) }))
          .filter((edge) => edge.from !== edge.to),
      }).waves;
  const columnOf = new Map<string, number>();
  waves.forEach((wave, column) => wave.forEach((id) => columnOf.set(id, column)));
  const rows: number[] = [];
  const placed = nodes.map((id) => {
    const column = columnOf.get(unit(id)) ?? 0;
    const row = rows[column] ?? 0;
    rows[column] = row + 1;
    return {
      id,
      column,
      row,
      status: statusOf.get(id) ?? NOT_STARTED,
      in_cycle: cycleOf.has(id),
    };
  });
  const seen = new Set<string>();
  return {
    nodes: placed,
    edges: edges
      .filter((edge) => {
        const key = `${edge.from}\u0000${edge.to}`;
        return !seen.has(key) && seen.add(key);
      })
      .map((edge) => ({
        from: edge.from,
        to: edge.to,
        in_cycle: cycleOf.has(edge.from) && unit(edge.from) === unit(edge.to),
      })),
    cycles: report.cycles,
    self_loops: report.self_loops,
    dangling: report.dangling,
    problems: graph.problems,
    acyclic: report.acyclic,
  };
}
