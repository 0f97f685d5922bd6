import path from 'node:path';
import type { TestCommand } from './detect.js';
import { insertAfter, shellQuote } from './chain.js';
import { fileLimitArguments } from './file-limit.js';
import type { RunEnvironment } from './environment.js';
import { nodeHarnessGuardFlag, vitestHarnessGuardFlag } from './harness-guard.js';
import { nodeLoadedFlag, vitestLoadedFlag } from './node-loaded-files.js';
import { nodeCallsFlag } from './node-call-recorder.js';
import { nodeWatchFlag } from './node-watch.js';
import { vitestEndFlag } from './vitest-process-end.js';
import { PYTEST_REPORTER_FILE } from './pytest-reporter.js';
import { UNITTEST_REPORTER_FILE } from './unittest-reporter.js';
import { inheritedMarkers, type CoachgateAdditions } from './user-view.js';
import { mergeVariable, wrapperReporting, type ReportChannel } from './wrapper-reports.js';

export interface Invocation {
  argv: string[];
  shell: RunEnvironment['shell'];
  /** The run's environment: the project's, plus the report variables a wrapped runner reads. */
  env: Record<string, string>;
  /** Report files the run may leave, in the order they are trusted. */
  channels: ReportChannel[];
  /** What coachgate added to obtain per-test ids, for env.notes. */
  notes: string[];
  /** The script shell to write (executable) before the run, when the package manager needs one. */
  scriptShell?: { file: string; content: string };
  /** What coachgate added that the tests must not see, for the node guard to take back out. */
  added: CoachgateAdditions;
}
import { commandShellArgv, defaultPython, loginShellArgv, shellLabel } from './platform.js';

/**
 * The argv actually run: the detected command plus the flags that make the runner write a machine-readable
 * report outside the worktree, wrapped in `sh -c` (Windows: `cmd /c`) or the user's login shell when the command or config asks for a shell.
 */
export function buildInvocation(
  command: TestCommand,
  environment: RunEnvironment,
  reportDirectory: string,
  loginShell: boolean,
  /** The shell the package manager runs scripts with: the user's `script-shell`, else `sh`. */
  userScriptShell = 'sh',
  /** Node test processes and vitest list what they load (src/runner/node-loaded-files.ts). */
  listLoaded = false,
  /** Node test processes record the tests' calls (src/runner/node-call-recorder.ts). */
  recordCalls = false,
): Invocation {
  const junit = path.join(reportDirectory, 'junit.xml');
  const env = { ...environment.env };
  const notes: string[] = [];
  const added: CoachgateAdditions = { inheritedMarkers: inheritedMarkers(env) };
  let channels: ReportChannel[] = [];
  let argv: string[] | undefined;
  let shellCommand = command.shellCommand;
  let scriptShell: Invocation['scriptShell'];
  const fileArgs = command.files ? limitArguments(command, command.files) : [];
  if (command.argv) {
    const [program, ...rest] = command.argv;
    switch (command.runner) {
      case 'pytest': {
        // The project's interpreter, as `python -m pytest` would be: a PATH lookup of `pytest` can
        // find another install. The reporter records per-test results in-process (JSON lines).
        const report = path.join(reportDirectory, 'pytest-report.jsonl');
        argv = [
          environment.interpreter ?? defaultPython(),
          path.join(reportDirectory, PYTEST_REPORTER_FILE),
          report,
          ...rest,
          ...fileArgs,
          '-p',
          'no:cacheprovider',
        ];
        channels = [
          {
            file: report,
            format: 'pytest-jsonl',
            source: "coachgate's pytest plugin (in-process, JSON lines)",
          },
        ];
        break;
      }
      case 'unittest':
        argv = [
          environment.interpreter ?? defaultPython(),
          path.join(reportDirectory, UNITTEST_REPORTER_FILE),
          junit,
          ...rest,
        ];
        channels = [
          {
            file: junit,
            format: 'junit',
            source: "JUnit report from coachgate's unittest runner (python -m unittest)",
          },
        ];
        notes.push(
          "python -m unittest runs through coachgate's reporter: same loader and load_tests, plus a JUnit report",
        );
        break;
      case 'node-test':
        argv = [
          program!,
          '--test-reporter=spec',
          '--test-reporter-destination=stdout',
          '--test-reporter=junit',
          `--test-reporter-destination=${junit}`,
          ...rest,
          // Last: node reads every word after the first file as one more file, options too.
          ...fileArgs,
        ];
        // Through the environment, which every test child inherits (node passes it on).
        added.nodeOptions = nodeTestFlags(reportDirectory, listLoaded, recordCalls);
        env.NODE_OPTIONS = mergeVariable(env.NODE_OPTIONS, added.nodeOptions);
        notes.push(NODE_GUARD_NOTE);
        channels = [
          {
            file: junit,
            format: 'junit',
            source: 'node --test JUnit report (--test-reporter=junit)',
          },
        ];
        break;
      case 'vitest':
        argv = [
          program!,
          ...rest,
          ...fileArgs,
          '--reporter=default',
          '--reporter=junit',
          `--outputFile.junit=${junit}`,
          vitestHarnessGuardFlag(reportDirectory),
          ...(listLoaded ? [vitestLoadedFlag(reportDirectory)] : []),
        ];
        // vitest's forks inherit them: a project frame that ends the fork is named
        // (src/runner/vitest-process-end.ts); what their code reads (src/runner/node-loaded-files.ts)
        // and the tests' calls (src/runner/node-call-recorder.ts) are recorded. coachgate's vitest
        // setup file takes them back out of the tests' environment.
        added.nodeOptions = [
          vitestEndFlag(reportDirectory),
          ...(listLoaded ? [nodeLoadedFlag(reportDirectory)] : []),
          ...(recordCalls ? [nodeCallsFlag(reportDirectory)] : []),
        ].join(' ');
        env.NODE_OPTIONS = mergeVariable(env.NODE_OPTIONS, added.nodeOptions);
        notes.push(VITEST_PRELOAD_NOTE);
        channels = [
          { file: junit, format: 'junit', source: 'vitest JUnit report (--reporter=junit)' },
        ];
        break;
      case 'dotnet':
        // dotnet's own TRX logger, into the report directory rather than the tree's TestResults/.
        argv = [...command.argv, '--logger', 'trx', '--results-directory', reportDirectory];
        break;
      default:
        argv = command.argv;
    }
  }
  if (command.runner === 'npm' || command.runner === 'custom') {
    const wrapped = wrapperReporting(command, reportDirectory, listLoaded);
    // Where a wrapped node --test reports per test, its children check node:assert too, and a
    // wrapped node --test or mocha lists what it loads.
    if (wrapped.env.NODE_OPTIONS) {
      wrapped.env.NODE_OPTIONS += ` ${nodeTestFlags(reportDirectory, listLoaded, recordCalls)}`;
      // A vitest the wrapper starts: its forks name a product frame that ends them.
      wrapped.env.NODE_OPTIONS += ` ${vitestEndFlag(reportDirectory)}`;
      added.nodeOptions = wrapped.env.NODE_OPTIONS;
      notes.push(NODE_GUARD_NOTE);
    }
    if (wrapped.runnerArgs) added.runnerArgs = wrapped.runnerArgs;
    for (const [name, value] of Object.entries(wrapped.env))
      env[name] = mergeVariable(env[name], value);
    notes.push(
      `coachgate adds ${Object.keys(wrapped.env).join(', ')}: report flags so a wrapped pytest or node --test writes per-test results, passed through tox 3`,
    );
    if (wrapped.pathFirst.length > 0) {
      env.PATH = [...wrapped.pathFirst, env.PATH ?? ''].filter(Boolean).join(path.delimiter);
      notes.push(
        'coachgate puts python/python3/coverage shims first on PATH: a `-m unittest` they start ' +
          'records per-test results (sitecustomize on PYTHONPATH for that process only); ' +
          'anything else runs untouched',
      );
    }
    const appended = [...wrapped.appendArgs, ...fileArgs];
    if (appended.length > 0) {
      // npm needs `--` to pass arguments to the script; pnpm and yarn pass them as they are.
      if (argv) argv = [...argv, ...(argv[0] === 'npm' ? ['--'] : []), ...appended];
      else shellCommand = `${shellCommand} ${appended.map(shellQuote).join(' ')}`;
      notes.push(
        `appended to the script's last command (${command.scriptRunner}): ${appended.join(' ')}`,
      );
    }
    if (wrapped.insertArgs.length > 0 && command.chainStep) {
      const inserted = inChain(command, wrapped.insertArgs, reportDirectory, userScriptShell);
      shellCommand = inserted.shellCommand ?? shellCommand;
      if (inserted.scriptShell) {
        // npm reads its variables whatever their case: the user's own would compete with ours.
        for (const name of Object.keys(env))
          if (name.toLowerCase() === 'npm_config_script_shell') delete env[name];
        env.npm_config_script_shell = inserted.scriptShell.file;
        scriptShell = inserted.scriptShell;
      }
      notes.push(...inserted.notes);
    }
    channels = wrapped.channels;
  }
  const shellArgv = loginShell
    ? loginShellArgv(shellCommand ?? argv!.map(shellQuote).join(' '))
    : shellCommand !== undefined
      ? commandShellArgv(shellCommand)
      : undefined;
  const extra = { added, ...(scriptShell ? { scriptShell } : {}) };
  if (shellArgv)
    return { argv: shellArgv, shell: shellLabel(shellArgv), env, channels, notes, ...extra };
  return { argv: argv!, shell: 'none', env, channels, notes, ...extra };
}

const NODE_GUARD_NOTE =
  'coachgate adds NODE_OPTIONS=--require=<its harness guard> (and, in your run, a --require listing ' +
  'what the node --test or mocha processes load): a node --test or mocha test after which a ' +
  'node:assert member was replaced fails, naming it; the processes that run tests take it back ' +
  'out of their environment, so the programs they start do not inherit it';

const VITEST_PRELOAD_NOTE =
  "coachgate adds NODE_OPTIONS=--require=<its watches>: vitest's forks name a project frame that " +
  'ends them; in your run they list the files of the tree their code reads; in a trusted run they ' +
  "record the tests' calls into the changed product modules; its setup file takes it back out of " +
  "the tests' environment";

/**
 * What every node process of the run loads first: the watch of process ends and equality (before
 * the guard, which takes node:assert as the watch left it), the assert guard (which takes these
 * back out of the test processes' environment), the loaded-file recorder, the call recorder.
 */
function nodeTestFlags(reportDirectory: string, listLoaded: boolean, recordCalls: boolean): string {
  return [
    nodeWatchFlag(reportDirectory),
    nodeHarnessGuardFlag(reportDirectory),
    ...(listLoaded ? [nodeLoadedFlag(reportDirectory)] : []),
    ...(recordCalls ? [nodeCallsFlag(reportDirectory)] : []),
  ].join(' ');
}

/**
 * Reporter arguments for the runner inside a chain (`eslint . && vitest run && tsc --noEmit`): the one
 * command line is rewritten, the arguments inserted after the runner's own and the rest left as
 * written, so the shell still runs every command, in order, with its own exit-status rules; coachgate
 * never runs the steps itself. `toolchain.test` is that line. A package script is run by the package
 * manager, which must stay in charge (pretest/posttest, its environment, its `> pkg test` lines that
 * name a failing step), and has no way to take another script. So the manager is given a script
 * shell (`npm_config_script_shell`, read by npm, pnpm and yarn 1) that runs the rewritten line for
 * the test script, and every other command line (hooks, nested `npm run lint`) as it comes, under the
 * shell the user configured. yarn 2+ runs scripts in its own shell: its runs keep counts only.
 */
function inChain(
  command: TestCommand,
  args: string[],
  reportDirectory: string,
  userScriptShell: string,
): { shellCommand?: string; scriptShell?: Invocation['scriptShell']; notes: string[] } {
  const step = command.chainStep!;
  const line = command.shellCommand ?? command.chainLine ?? command.script!;
  const rewritten = insertAfter(line, step, args.map(shellQuote));
  const inserted = `inserted after the ${step.runner} command of the chain: ${args.join(' ')}`;
  if (command.shellCommand !== undefined) return { shellCommand: rewritten, notes: [inserted] };
  // npm on Windows runs scripts with cmd.exe, which this POSIX script shell cannot stand in for.
  if (process.platform === 'win32') return { notes: [] };
  if (yarnBerry(command)) {
    return {
      notes: [
        `yarn 2+ runs scripts in its own shell, so the ${step.runner} command of the chain gets no reporter arguments`,
      ],
    };
  }
  const file = path.join(reportDirectory, 'script-shell.sh');
  return {
    scriptShell: { file, content: scriptShellText(line, rewritten, userScriptShell) },
    notes: [
      `${inserted}; the ${command.chainLine ? 'script it runs' : 'test script'} runs as \`${rewritten}\` through npm_config_script_shell ` +
        `(a shell script of coachgate's that runs every other command line as is, under ${userScriptShell})`,
    ],
  };
}

/** yarn 2+ ("berry"), as the project declares it: yarn without a declared release is taken for 1. */
function yarnBerry(command: TestCommand): boolean {
  const manager = command.argv?.[0] === 'corepack' ? command.argv[1] : command.argv?.[0];
  const major = Number(/^yarn@(\d+)\./.exec(command.packageManager ?? '')?.[1] ?? 1);
  return manager === 'yarn' && major >= 2;
}

/** The script shell: `script` becomes `rewritten`; anything else runs unchanged under `shell`. */
function scriptShellText(script: string, rewritten: string, shell: string): string {
  return [
    '#!/bin/sh',
    '# coachgate: the test script with reporter arguments for its runner; other scripts as they are.',
    `if [ "$1" = -c ] && [ "$2" = ${shellQuote(script)} ]; then`,
    '  shift 2',
    `  exec ${shellQuote(shell)} -c ${shellQuote(rewritten)} "$@"`,
    'fi',
    `exec ${shellQuote(shell)} "$@"`,
    '',
  ].join('\n');
}

/** The arguments limiting the run to `files`; a command that cannot be limited is a caller's bug. */
function limitArguments(command: TestCommand, files: string[]): string[] {
  const limit = fileLimitArguments(command);
  if (!limit) throw new Error(`a ${command.runner} run cannot be limited to test files`);
  return limit(files);
}

/**
 * The command as the user would type it: coachgate's in-process reporters for pytest and unittest
 * are wrapper scripts in a temporary directory (`python3 /tmp/…/coachgate_pytest.py report.jsonl
 * …`), shown as the `python3 -m pytest …` they stand for; the reporter flags added to node --test
 * and vitest are left out. The run record keeps the argv as run.
 */
export function commandAsTyped(argv: readonly string[]): string {
  const nodeTest = withoutNodeTestReporters(argv) ?? withoutVitestReporters(argv);
  if (nodeTest) return nodeTest.join(' ');
  const [python, script, , ...rest] = argv;
  const module =
    script && path.basename(script) === PYTEST_REPORTER_FILE
      ? 'pytest'
      : script && path.basename(script) === UNITTEST_REPORTER_FILE
        ? 'unittest'
        : undefined;
  if (!module || !python) return argv.join(' ');
  const args = module === 'pytest' ? dropTrailing(rest, ['-p', 'no:cacheprovider']) : rest;
  return [python, '-m', module, ...args].join(' ');
}

/** The reporters node --test gets after its program (the JUnit one writes into the report directory). */
const NODE_TEST_REPORTERS = [
  '--test-reporter=spec',
  '--test-reporter-destination=stdout',
  '--test-reporter=junit',
];

function withoutNodeTestReporters(argv: readonly string[]): string[] | undefined {
  const added = argv.slice(1, 1 + NODE_TEST_REPORTERS.length);
  const destination = argv[1 + NODE_TEST_REPORTERS.length] ?? '';
  if (added.join('\n') !== NODE_TEST_REPORTERS.join('\n')) return undefined;
  if (!destination.startsWith('--test-reporter-destination=')) return undefined;
  return [argv[0]!, ...argv.slice(2 + NODE_TEST_REPORTERS.length)];
}

/** vitest's reporters, last: default and JUnit, then coachgate's own reporter modules. */
function withoutVitestReporters(argv: readonly string[]): string[] | undefined {
  const at = argv.indexOf('--reporter=default');
  if (at < 0 || argv[at + 1] !== '--reporter=junit') return undefined;
  if (!argv[at + 2]?.startsWith('--outputFile.junit=')) return undefined;
  const modules = argv.slice(at + 3);
  return modules.every((word) => word.startsWith('--reporter=') && path.isAbsolute(word.slice(11)))
    ? argv.slice(0, at)
    : undefined;
}

function dropTrailing(args: string[], tail: string[]): string[] {
  const at = args.length - tail.length;
  return at >= 0 && tail.every((item, index) => args[at + index] === item)
    ? args.slice(0, at)
    : args;
}
