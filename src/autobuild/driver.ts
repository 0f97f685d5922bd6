import path from 'node:path';
import { buildAgentPrompt } from '../actions/agent-prompt.js';
import { checkGraphCycles } from '../actions/check-graph-cycles.js';
import { openTask, type TaskScope } from '../actions/task-scope.js';
import { taskStatus } from '../actions/task-status.js';
import {
  finishTaskWorktree,
  preserveTaskWorktree,
  startTaskWorktree,
} from '../actions/worktree.js';
import { CallerError } from '../errors/errors.js';
import { initKey } from '../records/keys.js';
import { readJsonFile, writeJsonAtomically } from '../records/files.js';
import { readVerdictLog } from '../records/verdict-log.js';
import { storeDirectory } from '../records/mirror-paths.js';
import { runAgentTurn } from './agent.js';
import { playerIsolation, type PlayerIsolation } from './player-sandbox.js';
import { recordRefusalAsFeedback, refusalReasons } from './refusal.js';
import {
  readTurnValidation,
  validateTurn,
  validationTurns,
  type DriverValidation,
  type TurnValidation,
} from './validation.js';

export interface DriverSettings {
  player_cmd: string;
  coach_cmd: string;
  max_turns: number;
  auto_merge: boolean;
  agent_timeout_s: number;
  /** The plan's validators, run on each Player turn before the Coach (absent: no validation). */
  validation?: DriverValidation;
  /** The Player's command runs in the sandbox (`--sandbox-player`, the default; absent: true). */
  sandbox_player?: boolean;
}

export type DriverOutcome =
  'approved' | 'blocked' | 'max_turns' | 'no_verdict' | 'not_merged' | 'validation_failed';

/** How each ending maps to the process exit code (2 stays the CLI's usage error). */
export const OUTCOME_EXIT_CODES: Record<DriverOutcome, number> = {
  approved: 0,
  blocked: 1,
  max_turns: 3,
  no_verdict: 4,
  not_merged: 5,
  validation_failed: 6,
};

export interface DriverResult {
  outcome: DriverOutcome;
  task_id: string;
  worktree: string;
  turns: number;
  detail: string;
}

type TaskStatus = Awaited<ReturnType<typeof taskStatus>>;

/**
 * The AutoBuild loop: the task in its own worktree, a fresh Player process then a fresh Coach process per
 * turn, each prompted with the task and the latest feedback. The verdict is read from the server's records,
 * never from the agent's words. Everything it needs to resume is in those records and driver.json.
 */
export async function runAutobuild(
  repository: string,
  taskId: string,
  settings: DriverSettings,
  say: (line: string) => void,
  signal?: AbortSignal,
): Promise<DriverResult> {
  // Before any agent runs: a key created later could be one the Player's code made.
  await initKey();
  const started = await startTaskWorktree(repository, taskId);
  const worktree = started.path;
  say(
    `${started.created ? 'Started' : 'Resuming'} ${taskId} in ${path.relative(repository, worktree)} on ${started.branch} (base ${started.base_commit.slice(0, 12)})`,
  );
  await writeJsonAtomically(settingsPath(worktree, taskId), settings);
  const scope = await openTask(worktree, taskId);
  // Imported here: the HTTP transport brings hono, which the CLI's start-up never needs.
  const { startPlayerEndpoint } = await import('./player-endpoint.js');
  const endpoint = await startPlayerEndpoint(worktree);
  try {
    const player = await playerIsolation(
      scope,
      settings.sandbox_player !== false,
      endpoint,
      started.base_branch,
    );
    say(player.notice);
    return await driveTurns(repository, scope, settings, player, say, signal);
  } finally {
    await endpoint.close();
  }
}

/** Turn after turn until the task is approved, blocked, out of turns or without a verdict. */
async function driveTurns(
  repository: string,
  scope: TaskScope,
  settings: DriverSettings,
  player: PlayerIsolation,
  say: (line: string) => void,
  signal?: AbortSignal,
): Promise<DriverResult> {
  const { worktree, taskId } = scope;
  const end = (outcome: DriverOutcome, turns: number, detail: string): DriverResult => ({
    outcome,
    task_id: taskId,
    worktree,
    turns,
    detail,
  });

  const directory = driverDirectory(worktree, taskId);
  let status = await taskStatus(scope);
  while (status.status === 'in_progress') {
    const turn = await currentTurn(status, directory);
    if (turn > settings.max_turns) {
      await preserveTaskWorktree(repository, taskId, `max turns (${settings.max_turns}) reached`);
      return end(
        'max_turns',
        settings.max_turns,
        `${settings.max_turns} turns without approval; worktree preserved at ${worktree}`,
      );
    }
    say(`── Turn ${turn}/${settings.max_turns} ──`);
    const playerDone = status.turns.some((item) => item.turn === turn && item.player !== null);
    if (!playerDone) {
      const previous = await readTurnValidation(directory, turn - 1);
      const findings = previous?.verdict === 'FAIL' ? previous.retry_prompt : undefined;
      await agentTurn(scope, settings, 'player', turn, signal, findings, player);
    }
    status = await taskStatus(scope);
    say(`  Player: ${describePlayer(status, turn)}`);
    if (settings.validation) {
      const validation = settings.validation;
      const validated =
        (await readTurnValidation(directory, turn)) ??
        (await validateTurn(scope, validation, turn, directory, timeoutMs(settings), signal));
      say(`  Validate: ${describeValidation(validated)}`);
      if (validated.verdict === 'FAIL') {
        const failures = await validationFailures(directory);
        if (failures >= validation.max_validation_attempts) {
          await preserveTaskWorktree(repository, taskId, `validation failed ${failures} times`);
          return end(
            'validation_failed',
            turn,
            `validation failed ${failures} time(s), max_validation_attempts ${validation.max_validation_attempts} (findings in ${directory}); worktree preserved at ${worktree}`,
          );
        }
        say(
          `          attempt ${failures}/${validation.max_validation_attempts} failed: the findings go to the next Player turn`,
        );
        continue;
      }
    }
    await agentTurn(scope, settings, 'coach', turn, signal);
    status = await taskStatus(scope);
    let verdict = status.turns.find((item) => item.turn === turn)?.coach;
    const refused = await refusalReasons(scope, turn);
    if (refused.length > 0) {
      say(`  Coach:  approved → approval refused by the server:`);
      for (const reason of refused) say(`          - ${firstLine(reason)}`);
      if (!verdict) {
        await recordRefusalAsFeedback(scope, turn, refused);
        status = await taskStatus(scope);
        verdict = status.turns.find((item) => item.turn === turn)?.coach;
        say(`          the refusal is recorded as feedback for the next Player turn`);
      }
    }
    if (!verdict) {
      await preserveTaskWorktree(repository, taskId, `no verdict for turn ${turn}`);
      return end(
        'no_verdict',
        turn,
        `the Coach recorded no verdict for turn ${turn} (see its log in ${directory}); worktree preserved`,
      );
    }
    say(
      `  Coach:  ${verdict.decision}${verdict.must_fix ? ` (${verdict.must_fix} must_fix)` : ''} → ${status.status}, strikes ${status.strikes}/${status.max_strikes}`,
    );
    // A refusal's issues are its reasons, printed above.
    if (refused.length === 0)
      for (const issue of await mustFixIssues(scope, turn)) say(`          - ${issue}`);
  }
  const turns = status.turns.at(-1)?.turn ?? 0;
  if (status.status === 'blocked') {
    await preserveTaskWorktree(repository, taskId, status.block_reason ?? 'blocked');
    return end('blocked', turns, `${status.block_reason}; worktree preserved at ${worktree}`);
  }
  const finish = await finishTaskWorktree(repository, taskId, settings.auto_merge);
  if (finish.outcome === 'merged')
    return end(
      'approved',
      turns,
      `approved and merged into ${finish.base_branch} (${finish.commit.slice(0, 12)})`,
    );
  if (finish.outcome === 'not_confirmed')
    return end(
      'approved',
      turns,
      `approved; merge with: coachgate worktree finish --task ${taskId} --auto-merge`,
    );
  const why =
    finish.outcome === 'conflict'
      ? `merge conflict in ${finish.conflicts.join(', ')} (aborted)`
      : `the gate fails: ${finish.reasons.join('; ')}`;
  return end('not_merged', turns, `approved but not merged: ${why}; worktree kept at ${worktree}`);
}

/** Resume after an interruption: the settings the run started with, and the state its records hold. */
export async function readDriverSettings(
  repository: string,
  taskId: string,
): Promise<DriverSettings> {
  const file = settingsPath(path.join(repository, '.guardkit/worktrees', taskId), taskId);
  const stored = await readJsonFile<DriverSettings>(file);
  if (stored.state !== 'ok')
    throw new CallerError(
      `No interrupted autobuild run of ${taskId} to resume (${file} is missing or unreadable).`,
      `Start one: coachgate autobuild --task ${taskId} --player-cmd CMD --coach-cmd CMD.`,
    );
  return stored.value;
}

/** `coachgate autobuild status`: the loop so far, from the records in the task's worktree. */
export async function autobuildStatus(repository: string, taskId: string): Promise<string[]> {
  const worktree = path.join(repository, '.guardkit/worktrees', taskId);
  const scope = await openTask(worktree, taskId).catch(() => {
    throw new CallerError(
      `${taskId} has no autobuild worktree in ${repository}.`,
      `Start one: coachgate autobuild --task ${taskId} --player-cmd CMD --coach-cmd CMD.`,
    );
  });
  const status = await taskStatus(scope);
  const lines = [
    `${taskId} ${status.title}: ${status.status}${status.block_reason ? ` (${status.block_reason})` : ''}, strikes ${status.strikes}/${status.max_strikes}`,
  ];
  for (const turn of status.turns) {
    const validation = await readTurnValidation(driverDirectory(worktree, taskId), turn.turn);
    const refused = turn.refused_approvals > 0 ? 'approval refused, then ' : '';
    const coach = turn.coach
      ? `${refused}${turn.coach.decision}${turn.coach.must_fix ? ` (${turn.coach.must_fix} must_fix)` : ''}`
      : validation?.verdict === 'FAIL'
        ? 'not run (validation failed)'
        : `${refused}pending`;
    lines.push(`  Turn ${turn.turn}: Player ${describePlayer(status, turn.turn)} | Coach ${coach}`);
    if (validation) lines.push(`    validation: ${describeValidation(validation)}`);
    if (turn.refused_approvals > 0)
      for (const reason of await refusalReasons(scope, turn.turn))
        lines.push(`    refused: ${firstLine(reason)}`);
  }
  return lines;
}

const ISSUES_SHOWN = 3;

/** The must_fix issues of a turn's verdict, as the log holds them: the first few, then a count. */
async function mustFixIssues(scope: TaskScope, turn: number): Promise<string[]> {
  const log = await readVerdictLog(scope.worktree, scope.taskId);
  const verdict = log.entries.find((entry) => entry.kind === 'verdict' && entry.turn === turn);
  const issues = (verdict?.issues ?? [])
    .filter((issue) => issue.severity === 'must_fix')
    .map(
      (issue) => `${issue.location ? `${issue.location}: ` : ''}${firstLine(issue.description)}`,
    );
  return issues.length > ISSUES_SHOWN
    ? [...issues.slice(0, ISSUES_SHOWN), `(+${issues.length - ISSUES_SHOWN} more in review.md)`]
    : issues;
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0]!;
}

async function agentTurn(
  scope: TaskScope,
  settings: DriverSettings,
  role: 'player' | 'coach',
  turn: number,
  signal?: AbortSignal,
  /** Validation findings for the Player, appended to its prompt. */
  findings?: string,
  /** How the Player's command runs (the Coach's always runs as the user's own command). */
  player?: PlayerIsolation,
): Promise<void> {
  const command = role === 'player' ? settings.player_cmd : settings.coach_cmd;
  const prompt = await buildAgentPrompt(role, scope, turn);
  await runAgentTurn({
    role,
    command,
    worktree: scope.worktree,
    taskId: scope.taskId,
    turn,
    prompt: findings ? `${prompt}\n\n${findings}` : prompt,
    directory: driverDirectory(scope.worktree, scope.taskId),
    timeoutMs: timeoutMs(settings),
    signal,
    isolation: player?.isolation,
    notice: player?.notice,
  });
}

function timeoutMs(settings: DriverSettings): number {
  return settings.agent_timeout_s * 1000;
}

/**
 * The turn to work on: the latest one while it is unfinished (its Player report is in, but neither a
 * verdict nor a failed validation closed it: an interrupted run resumes there), else the next one.
 */
async function currentTurn(status: TaskStatus, directory: string): Promise<number> {
  const validated = await validationTurns(directory);
  const latest = Math.max(0, ...status.turns.map((turn) => turn.turn), ...validated);
  if (latest === 0) return 1;
  const closed =
    status.turns.some((turn) => turn.turn === latest && turn.coach !== null) ||
    (await readTurnValidation(directory, latest))?.verdict === 'FAIL';
  return closed ? latest + 1 : latest;
}

async function validationFailures(directory: string): Promise<number> {
  let failures = 0;
  for (const turn of await validationTurns(directory))
    if ((await readTurnValidation(directory, turn))?.verdict === 'FAIL') failures++;
  return failures;
}

function describeValidation(validation: TurnValidation): string {
  const each = validation.validators.map(
    (item) => `${item.name} ${item.verdict ?? 'no verdict'} (${item.findings} finding(s))`,
  );
  return `${validation.verdict}: ${each.join(', ')}`;
}

function describePlayer(status: TaskStatus, turn: number): string {
  const player = status.turns.find((item) => item.turn === turn)?.player;
  if (!player) return 'no report recorded';
  if ('problem' in player) return `report unreadable (${player.problem})`;
  return `${player.files_changed} file(s), tests ${player.tests_passed ? 'passing' : 'failing'} (its own claim)${player.concerns.length ? `, ${player.concerns.length} concern(s)` : ''}`;
}

function driverDirectory(worktree: string, taskId: string): string {
  return path.join(storeDirectory(worktree), taskId, 'driver');
}

function settingsPath(worktree: string, taskId: string): string {
  return path.join(driverDirectory(worktree, taskId), 'driver.json');
}

/**
 * `coachgate autobuild feature FEAT-ID`: the feature's tasks in the waves check_graph_cycles computes, one
 * task at a time (each merges before the next starts from the base), stopping at the first task that does
 * not end approved.
 */
export async function runFeature(
  repository: string,
  featureId: string,
  settings: DriverSettings,
  say: (line: string) => void,
  signal?: AbortSignal,
): Promise<DriverResult[]> {
  const graph = await checkGraphCycles(repository, { source: 'feature', feature_id: featureId });
  if (!graph.acyclic)
    throw new CallerError(
      `${featureId} has dependency cycles (${graph.cycles.map((cycle) => cycle.path.join(' → ')).join('; ')}): no order can finish it.`,
      'Break a cycle (check_graph_cycles suggests edges), then run again.',
    );
  if (graph.waves.length > 1 && !settings.auto_merge)
    throw new CallerError(
      `${featureId} has ${graph.waves.length} waves: later tasks build on merged earlier ones.`,
      'Pass --auto-merge.',
    );
  const results: DriverResult[] = [];
  for (const [index, wave] of graph.waves.entries()) {
    say(`══ ${featureId} wave ${index + 1}/${graph.waves.length}: ${wave.join(', ')} ══`);
    for (const taskId of wave) {
      const result = await runAutobuild(repository, taskId, settings, say, signal);
      say(`${taskId}: ${result.outcome.toUpperCase()} — ${result.detail}`);
      results.push(result);
      if (result.outcome !== 'approved') return results;
    }
  }
  return results;
}
