import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { buildAgentPrompt } from '../actions/agent-prompt.js';
import type { TaskScope } from '../actions/task-scope.js';
import { CallerError } from '../errors/errors.js';
import { planValidation, type PlanValidation } from './plan-validation.js';
import { parseValidatorVerdict, type ValidatorVerdict } from '../verdicts/validator-verdict.js';
import { readRegularFile } from '../repo/read-text.js';
import { readJsonFile, writeJsonAtomically } from '../records/files.js';
import { runAgentTurn } from './agent.js';

/** What the driver needs to validate: the plan's settings and the agent command that runs a validator. */
export interface DriverValidation extends PlanValidation {
  validator_cmd: string;
  /** The plan file the settings came from, as given. */
  plan: string;
}

/** One turn's validation, kept in the driver's directory so `resume` knows it happened. */
export interface TurnValidation {
  turn: number;
  /** FAIL when any validator failed or gave no verdict; WARN when any warned; else PASS. */
  verdict: 'PASS' | 'WARN' | 'FAIL';
  validators: { name: string; verdict: ValidatorVerdict['verdict']; findings: number }[];
  /** What the next Player turn is told; empty unless the verdict is FAIL. */
  retry_prompt: string;
}

/**
 * The plan's `meta.validation` for `coachgate autobuild --plan FILE`: null when the plan does not enable it.
 * The driver validates each task (run_after "task"); a wave or a plan is validated by whoever runs the
 * whole plan, since a merged task can no longer be retried.
 */
export async function readDriverValidation(
  planFile: string,
  validatorCmd: string | undefined,
): Promise<DriverValidation | null> {
  const text = await readRegularFile(path.resolve(planFile)).catch(() => {
    throw new CallerError(`cannot read the plan file ${planFile}.`, 'Check the --plan path.');
  });
  const settings = planValidation(text, planFile);
  if (!settings.enabled) {
    if (validatorCmd)
      throw new CallerError(
        `--validator-cmd was given, but ${planFile} does not enable meta.validation.`,
        'Set meta.validation.enabled: true in the plan, or drop --validator-cmd.',
      );
    return null;
  }
  if (settings.run_after !== 'task')
    throw new CallerError(
      `${planFile} validates after each ${settings.run_after}; coachgate autobuild validates each task.`,
      'Set meta.validation.run_after: task, or run the validators yourself after the whole wave or plan.',
    );
  if (!validatorCmd)
    throw new CallerError(
      `${planFile} enables validation (${settings.validators.join(', ')}), but no --validator-cmd was given.`,
      'Pass --validator-cmd CMD: an agent command like --player-cmd, prompted with agents/<validator>.md.',
    );
  return { ...settings, validator_cmd: validatorCmd, plan: planFile };
}

/**
 * Runs the plan's validators on a Player turn, one fresh agent process each, in order, and reads each
 * reply with parse_validator_verdict. A validator that ends without a verdict line counts as a FAIL: the
 * work is not validated.
 */
export async function validateTurn(
  scope: TaskScope,
  validation: DriverValidation,
  turn: number,
  directory: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<TurnValidation> {
  const results: TurnValidation['validators'] = [];
  const retryPrompts: string[] = [];
  for (const name of validation.validators) {
    const prompt = await buildAgentPrompt(name, scope, turn);
    const run = await runAgentTurn({
      role: name,
      command: validation.validator_cmd,
      worktree: scope.worktree,
      taskId: scope.taskId,
      turn,
      prompt,
      directory,
      timeoutMs,
      signal,
    });
    const parsed = parseValidatorVerdict(await readFile(run.log_path, 'utf8'));
    results.push({ name, verdict: parsed.verdict, findings: parsed.findings.length });
    if (parsed.retry_prompt) retryPrompts.push(`${name}:\n${parsed.retry_prompt}`);
    else if (parsed.verdict === null)
      retryPrompts.push(
        `${name}: the validator ended without a verdict line, so the work is not validated; re-check it against the task.`,
      );
  }
  const verdicts = results.map((result) => result.verdict);
  const record: TurnValidation = {
    turn,
    verdict: verdicts.some((verdict) => verdict === 'FAIL' || verdict === null)
      ? 'FAIL'
      : verdicts.includes('WARN')
        ? 'WARN'
        : 'PASS',
    validators: results,
    retry_prompt: retryPrompts.join('\n\n'),
  };
  await writeJsonAtomically(validationPath(directory, turn), record);
  return record;
}

export async function readTurnValidation(
  directory: string,
  turn: number,
): Promise<TurnValidation | null> {
  const stored = await readJsonFile<TurnValidation>(validationPath(directory, turn));
  return stored.state === 'ok' ? stored.value : null;
}

/** Turns with a stored validation, ascending. */
export async function validationTurns(directory: string): Promise<number[]> {
  const names = await readdir(directory).catch(() => [] as string[]);
  return names
    .map((name) => VALIDATION_FILE.exec(name)?.[1])
    .filter((turn): turn is string => turn !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}

const VALIDATION_FILE = /^validation_turn_(\d+)\.json$/;

function validationPath(directory: string, turn: number): string {
  return path.join(directory, `validation_turn_${turn}.json`);
}
