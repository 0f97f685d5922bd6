import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config/config.js';
import { CallerError } from '../errors/errors.js';
import { listWorkingFiles } from '../repo/git.js';
import { OutsideWorktreeError, readWorktreeFile } from '../repo/worktree-file.js';
import { chainCommands, type ChainCommand } from './chain.js';

/** Which report the command will leave behind, so the right parser reads it. */
export type ReportKind = 'junit' | 'go-json' | 'cargo' | 'text';

export interface TestCommand {
  /** What to run: an argv (no shell) or, for commands written in config, a shell string. */
  argv?: string[];
  shellCommand?: string;
  detected_by: string;
  runner:
    | 'pytest'
    | 'unittest'
    | 'node-test'
    | 'vitest'
    | 'npm'
    | 'go'
    | 'cargo'
    | 'maven'
    | 'dotnet'
    | 'custom';
  report: ReportKind;
  /**
   * The runner a package script or `toolchain.test` ends with, which takes reporter arguments appended
   * (through the package manager, or to the shell command).
   */
  scriptRunner?: ScriptRunner;
  /**
   * The runner inside the chain of the script or `toolchain.test`, when another command ends it
   * (`eslint . && vitest run && tsc --noEmit`): reporter arguments are inserted after its command.
   */
  chainStep?: ChainStep;
  /**
   * The script line `chainStep` is in, when the test script reaches it through the package manager
   * (`"test": "npm run test:unit"`): the manager runs that line in a shell of its own.
   */
  chainLine?: string;
  /** The package script the package manager runs, as written. */
  script?: string;
  /** `packageManager` from package.json (`pnpm@9.15.0`) when it names the manager that runs the script. */
  packageManager?: string;
  /** Test files (relative to the project) the run is limited to; absent: the whole suite. */
  files?: string[];
}

export type ScriptRunner = 'vitest' | 'jest' | 'mocha' | 'ava' | 'tape' | 'tap' | 'uvu';
/** A runner's command in a chain, where in the command line its own arguments end. */
export interface ChainStep extends ChainCommand {
  runner: ScriptRunner;
}
export type PackageManager = 'npm' | 'pnpm' | 'yarn';

/**
 * Detection order: trusted config `toolchain.test`, then project markers (pytest, package.json, go, cargo,
 * maven, dotnet). A caller-supplied command is accepted only when the trusted config allows it.
 */
export async function detectTestCommand(
  worktree: string,
  config: Config,
  override?: string[],
): Promise<TestCommand> {
  if (override) {
    if (!config.coachgate.allow_command_override) {
      throw new CallerError(
        'The command input is refused: the base-commit config does not set coachgate.allow_command_override: true.',
        'Omit `command` (coachgate detects the test command), or set toolchain.test / allow_command_override in .guardkit/config.yaml on the base branch.',
      );
    }
    if (override.length === 0 || override[0]!.trim() === '')
      throw new CallerError('command is empty.', 'Pass an argv array such as ["pytest", "-q"].');
    return {
      argv: override,
      detected_by: 'command input (allowed by coachgate.allow_command_override)',
      runner: 'custom',
      report: 'text',
    };
  }
  if (config.toolchain?.test) {
    const scriptRunner = lastCommandRunner(config.toolchain.test);
    const chainStep = scriptRunner ? undefined : runnerInChain(config.toolchain.test);
    return {
      shellCommand: config.toolchain.test,
      detected_by: 'toolchain.test in .guardkit/config.yaml (base commit)',
      runner: 'custom',
      report: 'text',
      ...(scriptRunner ? { scriptRunner } : {}),
      ...(chainStep ? { chainStep } : {}),
    };
  }
  const files = new Set(await readdir(worktree).catch(() => [] as string[]));
  const unittest = await unittestCommand(worktree, files);
  if (unittest) return unittest;
  const marker =
    ['pytest.ini', 'pyproject.toml', 'setup.cfg', 'conftest.py'].find((name) => files.has(name)) ??
    (await pythonTestsMarker(worktree, files));
  if (marker) {
    return {
      argv: ['pytest'],
      detected_by: `${marker} → pytest`,
      runner: 'pytest',
      report: 'junit',
    };
  }
  if (files.has('package.json')) {
    const test = await packageTestScript(worktree);
    if (test) return nodeCommand(test, await packageManager(worktree, files));
  }
  if (files.has('go.mod'))
    return {
      argv: ['go', 'test', '-json', './...'],
      detected_by: 'go.mod → go test ./...',
      runner: 'go',
      report: 'go-json',
    };
  if (files.has('Cargo.toml'))
    return {
      argv: ['cargo', 'test'],
      detected_by: 'Cargo.toml → cargo test',
      runner: 'cargo',
      report: 'cargo',
    };
  if (files.has('pom.xml'))
    return {
      argv: ['mvn', '-q', 'test'],
      detected_by: 'pom.xml → mvn -q test',
      runner: 'maven',
      report: 'text',
    };
  const dotnet = [...files].find((name) => name.endsWith('.sln') || name.endsWith('.csproj'));
  if (dotnet)
    return {
      argv: ['dotnet', 'test'],
      detected_by: `${dotnet} → dotnet test`,
      runner: 'dotnet',
      report: 'text',
    };
  // Last, so a project with a manifest keeps its own runner.
  const pytestFile = await pytestFileInTree(worktree);
  if (pytestFile) {
    const folder = path.posix.dirname(pytestFile);
    return {
      argv: ['pytest'],
      detected_by: `${pytestFile} → pytest (tests found in ${folder === '.' ? 'the root' : `${folder}/`})`,
      runner: 'pytest',
      report: 'junit',
    };
  }
  throw new CallerError(
    `No test command found in ${worktree}: no toolchain.test in the base-commit .guardkit/config.yaml and no project marker (pyproject.toml, pytest.ini, setup.cfg, conftest.py, test_*.py or *_test.py, package.json scripts.test, go.mod, Cargo.toml, pom.xml, *.csproj/*.sln).`,
    'Set toolchain.test in .guardkit/config.yaml on the base branch.',
  );
}

// `python -m unittest`, also under coverage (`coverage run --source=pkg -m unittest discover`,
// `python -m coverage run -m unittest`) and tox's `{envpython}`.
const UNITTEST_COMMAND =
  /(?:(?:python[\d.]*|\{envpython\})\s+-m\s+coverage\s+run|coverage[\d.-]*\s+run|python[\d.]*|\{envpython\})(?:\s+--?[\w-]+(?:[= ][^\s-]\S*)?)*?\s+-m\s+unittest\b([^&;|\n]*)/;
const UNITTEST_CONFIGS = ['Makefile', 'tox.ini', 'setup.cfg', 'pyproject.toml', 'noxfile.py'];

/**
 * A project that tests with `python -m unittest` (named in its Makefile, tox.ini, setup.cfg, pyproject.toml
 * or noxfile) or whose tests define `load_tests()` runs with unittest, not pytest: pytest ignores
 * `load_tests` and silently drops the tests it adds. A pytest.ini or conftest.py means pytest after all.
 */
async function unittestCommand(
  worktree: string,
  files: Set<string>,
): Promise<TestCommand | undefined> {
  if (files.has('pytest.ini') || files.has('conftest.py')) return undefined;
  for (const config of UNITTEST_CONFIGS.filter((name) => files.has(name))) {
    const text = await readProjectFile(worktree, config).catch(unreadable(''));
    const match = UNITTEST_COMMAND.exec(text);
    if (match) {
      const args = match[1]!
        .trim()
        .split(/\s+/)
        .filter((word) => word !== '' && !/["'$`{}]/.test(word));
      return {
        argv: ['python', ...args],
        detected_by: `${config} runs ${/coverage/.test(match[0]) ? 'coverage run -m unittest' : 'python -m unittest'} → unittest`,
        runner: 'unittest',
        report: 'junit',
      };
    }
  }
  const withLoadTests = await testFileDefining(worktree, /^def load_tests\(/m);
  if (withLoadTests) {
    return {
      argv: ['python'],
      detected_by: `${withLoadTests} defines load_tests() → python -m unittest`,
      runner: 'unittest',
      report: 'junit',
    };
  }
  return undefined;
}

/** The first Python test file (test*.py at the root or in tests/ or test/) whose text matches. */
async function testFileDefining(worktree: string, pattern: RegExp): Promise<string | undefined> {
  for (const directory of ['.', 'tests', 'test']) {
    const entries = await readdir(path.join(worktree, directory)).catch(() => [] as string[]);
    for (const name of entries.filter((entry) => /^test.*\.py$/.test(entry)).sort()) {
      const relative = path.posix.join(directory, name);
      if (pattern.test(await readProjectFile(worktree, relative).catch(unreadable(''))))
        return relative;
    }
  }
  return undefined;
}

/** Python tests where pytest looks with no config: `tests/*.py`, or test modules at the root. */
async function pythonTestsMarker(
  worktree: string,
  files: ReadonlySet<string>,
): Promise<string | undefined> {
  const entries = await readdir(path.join(worktree, 'tests')).catch(() => [] as string[]);
  if (entries.some((name) => name.endsWith('.py'))) return 'tests/*.py';
  const atRoot = [...files].some((name) => /^test_\w*\.py$|^\w+_test\.py$/.test(name));
  return atRoot ? 'test_*.py at the root' : undefined;
}

/** Folders pytest does not enter by default (its `norecursedirs`), and vendored trees. */
const NOT_COLLECTED =
  /^(?:\..*|.*\.egg|_darcs|build|CVS|dist|node_modules|venv|\{arch\}|vendor|third_party|site-packages)$/;

/**
 * A file pytest collects with no configuration (any `conftest.py`, `test_*.py` or `*_test.py`,
 * as its `python_files` default names them) anywhere in the tree outside the folders it skips and
 * outside virtual environments (a folder holding `pyvenv.cfg`, as pytest recognises one): the
 * shallowest, so the folder named is where the tests live (`_pytest/`, `testing/`).
 */
async function pytestFileInTree(worktree: string): Promise<string | undefined> {
  const listed = await listWorkingFiles(worktree).catch(() => [] as string[]);
  const environments = listed
    .filter((file) => path.posix.basename(file) === 'pyvenv.cfg')
    .map((file) => `${path.posix.dirname(file)}/`);
  const candidates = listed.filter((file) => {
    const parts = file.split('/');
    return (
      /^(?:conftest|test_\w*|\w+_test)\.py$/.test(parts.pop()!) &&
      !parts.some((part) => NOT_COLLECTED.test(part)) &&
      !environments.some((environment) => file.startsWith(environment))
    );
  });
  const depth = (file: string) => file.split('/').length;
  return candidates.sort((a, b) => depth(a) - depth(b) || a.localeCompare(b))[0];
}

/** A file of the project, which the Player can write: a link leading outside the worktree is refused. */
function readProjectFile(worktree: string, relative: string): Promise<string> {
  return readWorktreeFile(worktree, path.join(worktree, relative));
}

/** A file that cannot be read counts as absent; one linked outside the worktree refuses the call. */
function unreadable<T>(absent: T): (error: unknown) => T {
  return (error) => {
    if (error instanceof OutsideWorktreeError) throw error;
    return absent;
  };
}

async function readManifest(
  worktree: string,
): Promise<{ scripts?: Record<string, unknown>; packageManager?: unknown }> {
  return JSON.parse(await readProjectFile(worktree, 'package.json')) as {
    scripts?: Record<string, unknown>;
  };
}

/** The package manager the project names (`packageManager`, as corepack reads it), else its lockfile's. */
async function packageManager(
  worktree: string,
  files: Set<string>,
): Promise<{ name: PackageManager; source: string; declared?: string }> {
  const declared = await readManifest(worktree).then(
    (manifest) => manifest.packageManager,
    unreadable(undefined),
  );
  const named = typeof declared === 'string' ? /^(npm|pnpm|yarn)@/.exec(declared)?.[1] : undefined;
  if (named) {
    const spec = declared as string;
    return { name: named as PackageManager, source: `packageManager ${spec}`, declared: spec };
  }
  if (files.has('pnpm-lock.yaml')) return { name: 'pnpm', source: 'pnpm-lock.yaml' };
  if (files.has('yarn.lock')) return { name: 'yarn', source: 'yarn.lock' };
  return { name: 'npm', source: 'default' };
}

interface TestScript {
  script: string;
  /** `pretest`/`posttest` scripts the package manager runs around it. */
  hooks: string[];
  /** Every script of package.json, by name. */
  scripts: Record<string, string>;
}

async function packageTestScript(worktree: string): Promise<TestScript | undefined> {
  try {
    const { scripts } = await readManifest(worktree);
    const script = scripts?.test;
    // npm's placeholder script fails by design; it is not a test command.
    if (typeof script !== 'string' || /no test specified/.test(script)) return undefined;
    const hooks = ['pretest', 'posttest'].filter((hook) => typeof scripts?.[hook] === 'string');
    const named = Object.entries(scripts ?? {}).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    );
    return { script: script.trim(), hooks, scripts: Object.fromEntries(named) };
  } catch (error) {
    return unreadable(undefined)(error);
  }
}

/**
 * Runs node's test runner or vitest directly when that is all the script does, so coachgate can ask for a
 * JUnit report; anything else runs through the project's package manager (`npm test`, `pnpm test`,
 * `yarn test`), and the runner the script ends with (vitest, jest, mocha, ava) gets reporter arguments
 * appended. A `pretest` or `posttest` script is part of what `npm test` does, so it goes through npm too.
 */
function nodeCommand(
  { script, hooks, scripts }: TestScript,
  manager: { name: PackageManager; source: string; declared?: string },
): TestCommand {
  const words = script.split(/\s+/);
  const plain = hooks.length === 0 && !/[|&;<>()$`"'\\*?]/.test(script);
  // A script choosing its own node reporter keeps it: ours added to it would not pair up.
  if (
    plain &&
    words[0] === 'node' &&
    words.includes('--test') &&
    !script.includes('--test-reporter')
  ) {
    return {
      argv: ['node', ...words.slice(1)],
      detected_by: `package.json scripts.test (${script}) → node --test`,
      runner: 'node-test',
      report: 'junit',
    };
  }
  if (
    plain &&
    words[0] === 'vitest' &&
    (words.length === 1 || words[1] === 'run' || words[1]!.startsWith('-'))
  ) {
    const rest = words[1] === 'run' ? words.slice(2) : words.slice(1);
    return {
      argv: ['vitest', 'run', ...rest],
      detected_by: `package.json scripts.test (${script}) → vitest run`,
      runner: 'vitest',
      report: 'junit',
    };
  }
  const scriptRunner = lastCommandRunner(script);
  const nested = scriptRunner || runnerInChain(script) ? undefined : scriptRunAway(script, scripts);
  const chainStep = scriptRunner ? undefined : (nested?.step ?? runnerInChain(script));
  const via = manager.source === 'default' ? '' : ` (${manager.source})`;
  return {
    argv: [manager.name, 'test'],
    detected_by: `package.json scripts.test (${script}) → ${manager.name} test${via}`,
    runner: 'npm',
    report: 'text',
    script,
    ...(scriptRunner ? { scriptRunner } : {}),
    ...(chainStep ? { chainStep } : {}),
    ...(nested ? { chainLine: nested.line } : {}),
    ...(manager.declared ? { packageManager: manager.declared } : {}),
  };
}

/** `npm run x`, `npm run-script x`, `pnpm [run] x`, `yarn [run] x`: the one script a line runs. */
const RUN_SCRIPT = /^(?:npm\s+run(?:-script)?|pnpm(?:\s+run)?|yarn(?:\s+run)?)\s+([\w:.-]+)$/;

/**
 * The runner a test script reaches by running other scripts (`"test": "npm run unit"`, `npm run lint
 * && npm run unit`, up to three deep), with the script line it is in: the package manager runs that
 * line through the same script shell, which gives the runner its report flags there. Only when
 * exactly one runner is reached (two reports would compete).
 */
function scriptRunAway(
  script: string,
  scripts: Record<string, string>,
  depth = 0,
): { line: string; step: ChainStep } | undefined {
  if (depth >= 3) return undefined;
  const reached = (chainCommands(script) ?? []).flatMap((command) => {
    const name = RUN_SCRIPT.exec(command.text)?.[1];
    const next = name && !LIFECYCLE.has(name) ? scripts[name]?.trim() : undefined;
    if (next === undefined) return [];
    const step = runnerInChain(next);
    const found = step ? { line: next, step } : scriptRunAway(next, scripts, depth + 1);
    return found ? [found] : [];
  });
  return reached.length === 1 ? reached[0] : undefined;
}

/** Scripts the package manager runs around the test script itself: never where its runner is. */
const LIFECYCLE = new Set(['test', 'pretest', 'posttest']);

const SCRIPT_RUNNERS: readonly ScriptRunner[] = [
  'vitest',
  'jest',
  'mocha',
  'ava',
  'tape',
  'tap',
  'uvu',
];
/** Programs that run the command after them: package runners, env setters, coverage wrappers. */
const COMMAND_PREFIXES = new Set(['npx', 'cross-env', 'pnpm', 'yarn', 'exec', 'nyc', 'c8', '--']);

/**
 * The runner a script ends with (`pnpm lint && vitest run`, `tsc && jest --ci`, `npx mocha`,
 * `nyc --reporter=lcov tape test/*.js`): arguments appended to the script reach it. Undefined when
 * the last command pipes, redirects or is something else.
 */
export function lastCommandRunner(script: string): ScriptRunner | undefined {
  const last =
    script
      .split(/&&|\|\||;/)
      .pop()
      ?.trim() ?? '';
  if (/[|<>`#]|\$\(|&$/.test(last)) return undefined;
  return commandRunner(last);
}

/**
 * The one runner of a chain (`pnpm lint && vitest run --coverage`, `jest && npm run check:type:ts`),
 * when its command takes arguments at its end. Undefined with two runners (their reports would
 * compete), a runner behind a pipe or redirection, or a line that is not a plain chain.
 */
export function runnerInChain(line: string): ChainStep | undefined {
  const commands = chainCommands(line) ?? [];
  const runners = commands.flatMap((command) => {
    const runner = commandRunner(command.text);
    return runner ? [{ ...command, runner }] : [];
  });
  return runners.length === 1 && runners[0]!.simple ? runners[0] : undefined;
}

/** The runner a command starts, looking through prefixes and their options (`c8 -r lcov mocha`). */
function commandRunner(command: string): ScriptRunner | undefined {
  const words = command.split(/\s+/).filter((word) => !/^[A-Z_][A-Z0-9_]*=/.test(word));
  for (const [index, word] of words.entries()) {
    const program = path.basename(word);
    const runner = SCRIPT_RUNNERS.find((name) => name === program || program === `_${name}`);
    if (runner) return runner;
    const previous = words[index - 1] ?? '';
    const optionValue = previous.startsWith('-') && !previous.includes('=');
    if (!COMMAND_PREFIXES.has(program) && !word.startsWith('-') && !optionValue) return undefined;
  }
  return undefined;
}
