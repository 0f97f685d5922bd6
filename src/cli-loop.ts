import path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { gateReport } from './actions/gate-report.js';
import { openTask } from './actions/task-scope.js';
import { CallerError } from './core/errors.js';
import { GATE_FORMATS, renderGate, type GateFormat } from './core/gate-report.js';

/** Writes to stdout: the CLI's `print`, passed in so this module never writes there on its own. */
export type Print = (text: string) => void;

/** Sub-commands of the whole loop (gate, worktree, task, hook, autobuild), each returning its exit code. */
export const LOOP_COMMANDS = new Set(['gate']);

export const LOOP_USAGE = `  coachgate gate --task ID [--worktree DIR] [--base REF] [--format box|text|json]
                                                   for hooks and CI: exit 0 only if the task is approved,
                                                   nothing changed since the approving test run, the task
                                                   graph has no cycle and build/typecheck/lint pass`;

/** Exit 2 for a caller mistake (bad arguments, unknown task), so scripts can tell it from a failure. */
export async function runLoopCommand(argv: string[], print: Print): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'gate':
        return await gateCommand(rest, print);
      default:
        throw new CallerError(`unknown command ${JSON.stringify(command)}`);
    }
  } catch (error) {
    if (!(error instanceof CallerError)) throw error;
    process.stderr.write(`coachgate ${command}: ${error.message}\n`);
    return 2;
  }
}

/** parseArgs, with its errors turned into caller mistakes. */
export function parseOptions<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new CallerError((error as Error).message, 'Run "coachgate --help" for usage.');
  }
}

async function gateCommand(args: string[], print: Print): Promise<number> {
  const { values } = parseOptions(args, { task: { type: 'string' }, worktree: { type: 'string' }, base: { type: 'string' }, format: { type: 'string' } });
  if (!values.task) throw new CallerError('gate needs --task ID');
  const format = (values.format ?? 'box') as GateFormat;
  if (!GATE_FORMATS.includes(format)) throw new CallerError(`--format must be one of ${GATE_FORMATS.join(', ')}, not ${JSON.stringify(values.format)}`);
  const report = await gateReport(await openTask(path.resolve(values.worktree ?? '.'), values.task, values.base));
  print(renderGate(report, format));
  return report.passed ? 0 : 1;
}
