import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import { text } from 'node:stream/consumers';
import { gateReport } from '../actions/gate-report.js';
import { createTask } from '../actions/create-task.js';
import { openTask } from '../actions/task-scope.js';
import {
  finishTaskWorktree,
  preserveTaskWorktree,
  startTaskWorktree,
  type WorktreeFinish,
} from '../actions/worktree.js';
import { stopHook } from '../autobuild/hook.js';
import { AUTOBUILD_USAGE, autobuildCommand } from './autobuild.js';
import { initCommand } from './init.js';
import { parseOptions, type Print } from './options.js';
import { runStateCommand } from './state.js';
import { CallerError } from '../errors/errors.js';
import { GATE_FORMATS, renderGate, type GateFormat } from '../actions/gate-render.js';
import { planValidation } from '../autobuild/plan-validation.js';

/** Sub-commands of the whole loop (init, gate, worktree, task, hook, autobuild), each returning its exit code. */
export const LOOP_COMMANDS = new Set([
  'init',
  'gate',
  'worktree',
  'task',
  'autobuild',
  'hook',
  'plan',
]);

export const LOOP_USAGE = `  coachgate gate --task ID [--worktree DIR] [--base REF] [--format box|text|json]
                                                   for hooks and CI: exit 0 only if the task is approved,
                                                   nothing changed since the approving test run, the task
                                                   graph has no cycle and build/typecheck/lint pass
  coachgate worktree start --task ID [--worktree REPO] [--base REF]
                                                   new worktree .guardkit/worktrees/ID on autobuild/ID
  coachgate worktree finish --task ID [--worktree REPO] [--auto-merge]
                                                   merge into the base branch if the gate passes
                                                   (asks first unless --auto-merge), remove the worktree
  coachgate worktree preserve --task ID [--worktree REPO] [--reason TEXT]
                                                   commit the work on autobuild/ID and keep the worktree
  coachgate task new --title TEXT --criterion TEXT [--criterion TEXT ...] [--id ID]
                     [--description TEXT] [--depends-on ID ...] [--worktree DIR] [--no-commit]
                                                   write a task file load_task reads, commit it (that
                                                   file only) and pin the task's base commit
  coachgate plan validation FILE                   print a plan's meta.validation (with defaults) as JSON
  coachgate hook [--task ID]                       Claude Code Stop/SubagentStop hook: blocks a completion
                                                   claim while the task's gate fails (reads JSON on stdin)
${AUTOBUILD_USAGE}`;

/** Exit 2 for a caller mistake (bad arguments, unknown task), so scripts can tell it from a failure. */
export async function runLoopCommand(argv: string[], print: Print): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'init':
        return await initCommand(rest, print);
      case 'gate':
        return await gateCommand(rest, print);
      case 'worktree':
        return await worktreeCommand(rest, print);
      case 'task':
        return await taskCommand(rest, print);
      case 'autobuild':
        return await autobuildCommand(rest, print);
      case 'hook':
        return await hookCommand(rest, print);
      case 'plan':
        return await planCommand(rest, print);
      default:
        throw new CallerError(`unknown command ${JSON.stringify(command)}`);
    }
  } catch (error) {
    if (!(error instanceof CallerError)) throw error;
    process.stderr.write(`coachgate ${command}: ${error.message}\n`);
    return 2;
  }
}

async function gateCommand(args: string[], print: Print): Promise<number> {
  const { values } = parseOptions(args, {
    task: { type: 'string' },
    worktree: { type: 'string' },
    base: { type: 'string' },
    format: { type: 'string' },
  });
  if (!values.task) throw new CallerError('gate needs --task ID');
  const format = (values.format ?? 'box') as GateFormat;
  if (!GATE_FORMATS.includes(format))
    throw new CallerError(
      `--format must be one of ${GATE_FORMATS.join(', ')}, not ${JSON.stringify(values.format)}`,
    );
  const report = await gateReport(
    await openTask(path.resolve(values.worktree ?? '.'), values.task, values.base),
  );
  print(renderGate(report, format));
  return report.passed ? 0 : 1;
}

async function worktreeCommand(args: string[], print: Print): Promise<number> {
  const options = {
    task: { type: 'string' },
    worktree: { type: 'string' },
    base: { type: 'string' },
    'auto-merge': { type: 'boolean' },
    reason: { type: 'string' },
  } as const;
  const { values, positionals } = parseOptions(args, options);
  const [action] = positionals;
  if (!values.task) throw new CallerError('worktree needs --task ID');
  const repository = path.resolve(values.worktree ?? '.');
  switch (action) {
    case 'start': {
      const started = await startTaskWorktree(repository, values.task, values.base);
      print(
        `${started.created ? 'started' : 'already started'}: ${started.path} on ${started.branch} (from ${started.base_branch} at ${started.base_commit.slice(0, 12)})`,
      );
      return 0;
    }
    case 'finish': {
      let result = await finishTaskWorktree(repository, values.task, values['auto-merge'] === true);
      const asked = result.outcome === 'not_confirmed' && process.stdin.isTTY === true;
      if (asked && (await confirm(`Merge ${result.branch} into ${result.base_branch}? [y/N] `))) {
        result = await finishTaskWorktree(repository, values.task, true);
      }
      print(
        describeFinish(result, { asked, command: autoMergeCommand(values.task, values.worktree) }),
      );
      return result.outcome === 'merged' ? 0 : 1;
    }
    case 'preserve': {
      const kept = await preserveTaskWorktree(repository, values.task, values.reason ?? 'stopped');
      print(
        `preserved: ${kept.path} on ${kept.branch}${kept.commit ? ` (commit ${kept.commit.slice(0, 12)})` : ' (nothing new to commit)'}`,
      );
      return 0;
    }
    default:
      throw new CallerError(
        `worktree needs start, finish or preserve, not ${JSON.stringify(action ?? '')}`,
      );
  }
}

/** `asked`: whether the terminal prompt was shown (else there was none); `command` merges unasked. */
function describeFinish(
  result: WorktreeFinish,
  confirmation: { asked: boolean; command: string },
): string {
  switch (result.outcome) {
    case 'merged':
      // The records are the audit trail of the merge: committed, CI's `coachgate gate` can check them.
      return [
        `merged: ${result.branch} into ${result.base_branch} (${result.commit.slice(0, 12)}); worktree removed, records in ${result.records_copied_to}`,
        `Commit them, so the signed approval travels with ${result.base_branch} and \`coachgate gate\` can check it anywhere:`,
        `  git add .guardkit/autobuild/${result.task_id} && git commit -m "${result.task_id}: coachgate records"`,
      ].join('\n');
    case 'conflict':
      return `not merged: ${result.branch} conflicts with ${result.base_branch} in ${result.conflicts.join(', ')}. The merge was aborted; nothing changed. Resolve in ${result.path}, then finish again.`;
    case 'not_confirmed':
      // Without a terminal (CI, a script, an agent's shell) there is no one to ask: say so, and how.
      return [
        `not merged: ${result.task_id} passes the gate, but the merge was not confirmed (pass --auto-merge, or merge: true): ${confirmation.asked ? 'the answer at the prompt was not yes' : 'there is no terminal to ask on'}.`,
        `To merge ${result.branch} into ${result.base_branch} without asking: ${confirmation.command}`,
        `Nothing changed; the worktree is kept at ${result.path}.`,
      ].join('\n');
    default:
      return [
        `not merged: ${result.task_id} (worktree kept at ${result.path})`,
        ...result.reasons.map((reason) => `  - ${reason}`),
      ].join('\n');
  }
}

/** The finish command as the user typed it, with --auto-merge: what merges without a terminal. */
function autoMergeCommand(taskId: string, worktree: string | undefined): string {
  const word = (text: string) =>
    /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
  const where = worktree === undefined ? '' : ` --worktree ${word(worktree)}`;
  return `coachgate worktree finish --task ${word(taskId)}${where} --auto-merge`;
}

/** Asks on the terminal; without one (CI, hooks) the answer is no, so only --auto-merge merges unattended. */
async function confirm(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) return false;
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await prompt.question(question)).trim());
  } finally {
    prompt.close();
  }
}

async function taskCommand(args: string[], print: Print): Promise<number> {
  const options = {
    title: { type: 'string' },
    criterion: { type: 'string', multiple: true },
    id: { type: 'string' },
    description: { type: 'string' },
    'depends-on': { type: 'string', multiple: true },
    worktree: { type: 'string' },
    task: { type: 'string' },
    base: { type: 'string' },
    'no-commit': { type: 'boolean' },
  } as const;
  const { values, positionals } = parseOptions(args, options);
  if (positionals[0] === 'pin-base')
    return runStateCommand(['task', ...positionals], values, print);
  if (positionals[0] !== 'new')
    throw new CallerError(
      `task needs the sub-command new or pin-base, not ${JSON.stringify(positionals[0] ?? '')}`,
    );
  const created = await createTask(
    path.resolve(values.worktree ?? '.'),
    {
      title: values.title ?? '',
      criteria: values.criterion ?? [],
      ...(values.id ? { id: values.id } : {}),
      ...(values.description ? { description: values.description } : {}),
      depends_on: values['depends-on'] ?? [],
    },
    { commit: !values['no-commit'], ...(values.base ? { baseRef: values.base } : {}) },
  );
  print(
    [
      `${created.id}: wrote ${created.path}`,
      created.commit
        ? `committed ${created.commit.slice(0, 12)}`
        : `Commit it: the server reads tasks from the base commit (git add ${created.path} && git commit).`,
      ...(created.force_added
        ? [
            `force-added (git add -f): ${created.force_added} ignores it, and the server reads tasks ` +
              'from the base commit; un-ignore .guardkit/ in that file so git shows later edits',
          ]
        : []),
      created.pinned_base
        ? `base pinned to ${created.pinned_base}`
        : `base not pinned yet: ${created.not_pinned}`,
    ].join('\n'),
  );
  return 0;
}

/** Exits 0: Claude Code reads the decision from the JSON on stdout; an empty stdout allows the stop. */
async function hookCommand(args: string[], print: Print): Promise<number> {
  const { values } = parseOptions(args, { task: { type: 'string' } });
  const raw = process.stdin.isTTY ? '' : await text(process.stdin);
  let input: object;
  try {
    input = raw.trim() ? JSON.parse(raw) : {};
  } catch {
    throw new CallerError('hook expects the hook event as JSON on stdin (Claude Code sends it).');
  }
  // Exit 2 would make Claude Code block with our stderr: a task we cannot read is reported, not enforced.
  const output = await stopHook(input, values.task).catch((error: unknown) => {
    if (error instanceof CallerError) return { systemMessage: `coachgate hook: ${error.message}` };
    throw error;
  });
  if (output) print(JSON.stringify(output));
  return 0;
}

/** For plan orchestrators: whether and how to validate, read from the plan's `meta.validation`. */
async function planCommand(args: string[], print: Print): Promise<number> {
  const { positionals } = parseOptions(args, {});
  const [action, file] = positionals;
  if (action !== 'validation' || !file) throw new CallerError('plan needs: plan validation FILE');
  const text = await readFile(path.resolve(file), 'utf8').catch(() => {
    throw new CallerError(`cannot read the plan file ${file}.`);
  });
  print(JSON.stringify(planValidation(text, file), null, 2));
  return 0;
}
