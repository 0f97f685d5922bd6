import path from 'node:path';
import type { ScriptRunner, TestCommand } from './detect.js';
import { vitestHarnessGuardFlag } from './harness-guard.js';
import { vitestLoadedFlag } from './node-loaded-files.js';
import type { ReportChannel } from './report/types.js';
import { JEST_PROGRAM } from './runner-programs.js';
import { unittestShims } from './unittest-shims.js';
import type { CoachgateAdditions } from './user-view.js';
export type { ReportChannel } from './report/types.js';

export interface WrapperReporting {
  /** Variables to add (merged with the user's own value, never replacing it). */
  env: Record<string, string>;
  /** Arguments appended after the wrapper's own, reaching the runner the script ends with. */
  appendArgs: string[];
  /** Arguments for the runner inside the script's chain, inserted after its command's own. */
  insertArgs: string[];
  channels: ReportChannel[];
  /** Directories put first on PATH (the unittest shims). */
  pathFirst: string[];
  /** The report arguments the runner's tests would read in its `process.argv`, and its program. */
  runnerArgs?: CoachgateAdditions['runnerArgs'];
}

/**
 * Per-test reports through a wrapper (`npm test`, `toolchain.test`, make, tox) without editing the
 * project: variables every pytest, every `node --test` and every mocha reads whatever starts them,
 * plus reporter arguments for vitest, jest or ava: appended (through the package manager, or to
 * `toolchain.test`) when the command ends with the runner, else inserted after the runner's command
 * in the chain. Runners that print TAP themselves (tape, node-tap) need nothing: the run reads the
 * TAP from its log.
 */
export function wrapperReporting(
  command: TestCommand,
  reportDirectory: string,
  /** vitest lists the modules its tests load (src/runner/node-loaded-files.ts). */
  listLoaded = false,
): WrapperReporting {
  const pytest = path.join(reportDirectory, 'wrapped-pytest.xml');
  const node = path.join(reportDirectory, 'wrapped-node.xml');
  const reporting: WrapperReporting = {
    env: { PYTEST_ADDOPTS: `--junitxml=${pytest} -o junit_family=xunit2` },
    appendArgs: [],
    insertArgs: [],
    pathFirst: [],
    channels: [
      {
        file: pytest,
        format: 'junit',
        source: 'pytest JUnit report via PYTEST_ADDOPTS=--junitxml',
      },
    ],
  };
  // Node refuses reporters and destinations that do not pair up: a command choosing its own reporter
  // without a destination would break with ours added, so it keeps its own output alone.
  if (
    !/--test-reporter\b/.test(
      command.shellCommand ?? command.script ?? command.argv?.join(' ') ?? '',
    )
  ) {
    // Node reads test-reporter flags from NODE_OPTIONS (20, 22 and 24); other node programs ignore them.
    reporting.env.NODE_OPTIONS = [
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      '--test-reporter=junit',
      `--test-reporter-destination=${node}`,
    ].join(' ');
    reporting.channels.push({
      file: node,
      format: 'junit',
      source: 'node --test JUnit report via NODE_OPTIONS=--test-reporter',
    });
  }
  passThroughTox(reporting.env);
  const runner = command.scriptRunner ?? command.chainStep?.runner;
  const last = command.scriptRunner !== undefined;
  const step = last ? lastCommand(command) : (command.chainStep?.text ?? '');
  const flags = runner && runnerFlags(runner, step, reportDirectory, last, listLoaded);
  if (flags) {
    if (last) reporting.appendArgs = flags.args;
    else reporting.insertArgs = flags.args;
    if (flags.channel) reporting.channels.push(flags.channel);
    Object.assign(reporting.env, flags.env);
    if (flags.program) reporting.runnerArgs = { program: flags.program, args: flags.args };
  }
  // unittest reads no option or variable a wrapper passes on: shims reach it (POSIX shells),
  // read after the runner the command names.
  if (process.platform !== 'win32') {
    const shims = unittestShims(reportDirectory);
    reporting.pathFirst.push(shims.bin);
    reporting.channels.push(shims.channel);
  }
  return reporting;
}

interface RunnerFlags {
  args: string[];
  /** Variables the runner reads its report options from. */
  env?: Record<string, string>;
  channel?: ReportChannel;
  /** The runner's program, when its tests read the process.argv it parsed `args` from. */
  program?: string;
}

/**
 * The arguments asking `runner` for a report, and where it goes: at the end of the script (`last`),
 * or after the runner's own command inside the chain.
 */
function runnerFlags(
  runner: ScriptRunner,
  command: string,
  reportDirectory: string,
  last: boolean,
  listLoaded: boolean,
): RunnerFlags | undefined {
  const via = last ? 'appended to the script' : "inserted after its command in the script's chain";
  if (runner === 'vitest') {
    const file = path.join(reportDirectory, 'wrapped-vitest.xml');
    const loaded = listLoaded ? [vitestLoadedFlag(reportDirectory)] : [];
    return {
      args: [
        '--reporter=default',
        '--reporter=junit',
        `--outputFile.junit=${file}`,
        vitestHarnessGuardFlag(reportDirectory),
        ...loaded,
      ],
      channel: { file, format: 'junit', source: `vitest JUnit report via arguments ${via}` },
    };
  }
  if (runner === 'jest') {
    const file = path.join(reportDirectory, 'wrapped-jest.json');
    return {
      args: ['--json', `--outputFile=${file}`],
      // Its tests run in its process (in band) or see its argv (workers): theirs to parse.
      program: JEST_PROGRAM,
      channel: {
        file,
        format: 'jest-json',
        source: `jest JSON report via --json --outputFile ${via}`,
      },
    };
  }
  if (runner === 'mocha' && !choosesOwnReporter(command)) {
    const file = path.join(reportDirectory, 'wrapped-mocha.xml');
    // Through mocha's own variable, read where its options are (below the command line's, above
    // the .mocharc's): mocha 12 parses its arguments in an ES module, after any preload could take
    // them back out of the process.argv its tests read.
    return {
      args: [],
      env: { MOCHA_OPTIONS: `--reporter=xunit --reporter-option=output=${file}` },
      channel: { file, format: 'junit', source: 'mocha xunit report via MOCHA_OPTIONS' },
    };
  }
  // ava prints TAP on stdout with --tap; the run reads it from the log.
  if (runner === 'ava') return { args: ['--tap'] };
  return undefined;
}

/** The last command of the script or `toolchain.test`, the one arguments appended to it reach. */
function lastCommand(command: TestCommand): string {
  return (command.script ?? command.shellCommand ?? '').split(/&&|\|\||;/).pop() ?? '';
}

/**
 * mocha takes the last --reporter given: a command that picks its own (`mocha --reporter tap`) keeps
 * it, and its TAP output is read from the log instead.
 */
function choosesOwnReporter(command: string): boolean {
  return /(?:^|\s)(?:--reporter|-R)\b/.test(command);
}

/**
 * tox hands its commands a stripped environment, so the report variables would never reach a pytest it runs.
 * tox 3 reads extra pass-through names from TOX_TESTENV_PASSENV; other programs ignore it. tox 4 dropped it,
 * and its TOX_OVERRIDE of `testenv.pass_env` loses the tox.ini's own pass_env before 4.39 (tox-dev/tox#3348),
 * so under tox 4 a run has per-test ids only when tox.ini passes PYTEST_ADDOPTS itself.
 * PYTHONDONTWRITEBYTECODE keeps tox's runs from writing bytecode into the tree, as a direct run does.
 */
function passThroughTox(env: Record<string, string>): void {
  env.TOX_TESTENV_PASSENV = [...Object.keys(env), 'PYTHONDONTWRITEBYTECODE'].join(' ');
}

/** The user's value first, ours after it: both reach the runner. */
export function mergeVariable(existing: string | undefined, added: string): string {
  return existing && existing.trim() !== '' ? `${existing} ${added}` : added;
}
