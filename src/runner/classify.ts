import {
  firstErrorStatement,
  firstLineMatching,
  firstProjectLocation,
  projectLocations,
  quoteLine,
} from './report/locate.js';
import {
  missingModules,
  ownerOf,
  packageNameOf,
  type MissingModule,
  type ModuleOwner,
} from './report/missing-module.js';
import { visibleLines } from './report/text.js';
import { isTestSideFile } from '../scope/test-paths.js';
import { stepFailureClass } from './step-failure.js';
import type { FailureClassification, RunStatus, TestCounts } from './report/types.js';
export type { FailureClassification } from './report/types.js';

export interface FailureFacts {
  status: RunStatus;
  output: string;
  exit_code: number | null;
  /** Top-level module names the repository holds (a missing one is the Player's bug, not the environment's). */
  firstPartyModules: string[];
  signal?: string | null;
  /** The run's counts: a failing exit with no failing test may be a step around the tests. */
  counts?: TestCounts;
  /** The test command as written (package script or toolchain.test), to name a failing command of a chain. */
  script?: string;
}

/**
 * Why a run did not pass, so the Player is sent to fix the right thing: a missing database is not
 * a code failure, and a missing runner is not the Player's bug. Checked in order: outcome-level
 * classes, environment, a failed lint/build step, infrastructure, a missing first-party module, syntax errors, collection,
 * a killing signal, then code.
 */
export function classifyFailure(facts: FailureFacts): FailureClassification {
  if (facts.status === 'passed')
    return { failure_class: 'none', reason: 'All tests passed.', advice: 'Nothing to fix.' };
  if (facts.status === 'timeout') return timeoutClass();
  const lines = visibleLines(facts.output);
  const output: ScannedOutput = { text: lines.join('\n'), lines };
  if (facts.status === 'no_tests') return noTestsClass(output);

  const modules = missingModules(output.lines).map((module) => ({
    module,
    owner: ownerOf(module, facts.firstPartyModules),
  }));
  const withOwner = (owner: ModuleOwner): MissingModule | undefined =>
    modules.find((entry) => entry.owner === owner)?.module;

  return (
    environmentClass(output, facts.exit_code, withOwner('runner'), withOwner('third_party')) ??
    (noFailingTest(facts) ? stepFailureClass(output.lines, facts.script) : undefined) ??
    infrastructureClass(output, withOwner('service_client')) ??
    missingFirstPartyClass(withOwner('first_party')) ??
    syntaxClass(output) ??
    collectionClass(output, withOwner('first_party_root')) ??
    signalClass(facts.signal) ??
    codeClass(output, facts)
  );
}

/** A failing run whose counts are known and show no failing test (tests passed; a step failed). */
function noFailingTest(facts: FailureFacts): boolean {
  if (facts.status === 'error') return true;
  const { counts } = facts;
  return facts.status === 'failed' && !!counts && counts.failed + counts.errors === 0;
}

/** The visible output as text and as lines (split once: it may be megabytes). */
interface ScannedOutput {
  text: string;
  lines: readonly string[];
}

function timeoutClass(): FailureClassification {
  return {
    failure_class: 'timeout',
    reason: 'The run exceeded its time limit and was stopped; results are incomplete.',
    advice:
      'Find the hanging test (the last test started in the output; run that file alone), add per-test timeouts ' +
      '(pytest-timeout, vitest testTimeout, node --test-timeout), and check for waits on a network service, a ' +
      'lock, a subprocess or input that never comes.',
  };
}

// Most telling first: the runner's own final word, then what it collected.
const NO_TESTS_EVIDENCE: readonly RegExp[] = [
  /no tests ran/,
  /^(?:ℹ|#) tests 0$/,
  /No test files found/,
  /No tests found/,
  /\d+ deselected/,
  /collected 0 items/,
];

function noTestsClass(output: ScannedOutput): FailureClassification {
  const evidence = NO_TESTS_EVIDENCE.map((pattern) =>
    firstLineMatching(output.lines, pattern),
  ).find(Boolean);
  return {
    failure_class: 'no_tests',
    reason: evidence
      ? `The runner collected no tests to run ("${evidence}"); nothing was verified.`
      : 'No test ran to a verdict (no results found, or every test was skipped); nothing was verified.',
    advice:
      'Check test discovery: test files must match the runner naming (test_*.py or *_test.py, *.test.ts, ' +
      'test/**/*.test.js), sit under the configured test paths, and not be deselected (-k, -m) or all skipped. ' +
      'Run the test command by hand and confirm it lists the tests.',
  };
}

// Shells' own words only (`sh: 1: pytest: not found`, `bash: line 1: pytest: command not found`,
// `zsh: command not found: pytest`), so a test's "user: not found" message is not taken for one.
const COMMAND_NOT_FOUND =
  /^(?:\S*\/)?(?:ba|da|k)?sh(?:: line \d+)?: (?:\d+: )?(\S+): (?:command )?not found\s*$|^zsh: command not found: (\S+)/m;
const SPAWN_ENOENT = /spawn (\S+) ENOENT/;
// pytest exit 4: the runner rejected its arguments.
const INVALID_COMMAND =
  /ERROR: file or directory not found: |error: unrecognized arguments: |ERROR: usage: /;

function environmentClass(
  output: ScannedOutput,
  exitCode: number | null,
  missingRunner: MissingModule | undefined,
  missingDependency: MissingModule | undefined,
): FailureClassification | undefined {
  const shellNotFound = COMMAND_NOT_FOUND.exec(output.text);
  const notFound = shellNotFound?.[1] ?? shellNotFound?.[2] ?? SPAWN_ENOENT.exec(output.text)?.[1];
  if (notFound || exitCode === 127) {
    const command = notFound ?? 'the test command';
    const manager = command === 'pnpm' || command === 'yarn';
    return {
      failure_class: 'environment',
      reason: `The test command could not be started: ${command} was not found (exit ${exitCode ?? 'none'}).`,
      advice: manager
        ? `The project uses ${command} (its packageManager field or lockfile). Install it where the server runs: ` +
          `\`corepack enable\` (ships with Node) or \`npm install -g ${command}\`. Not a code failure.`
        : `Install ${command} where the tests run (in the project virtualenv for Python, in node_modules for Node) ` +
          'or set toolchain.test in .guardkit/config.yaml to a command that exists. Not a code failure.',
    };
  }
  if (exitCode === 126) {
    return {
      failure_class: 'environment',
      reason:
        'The test command was found but could not be executed (exit 126: not executable or permission denied).',
      advice:
        'Make the test command executable (chmod +x) or invoke it through its interpreter. Not a code failure.',
    };
  }
  if (missingRunner) {
    const runner = packageNameOf(missingRunner);
    return {
      failure_class: 'environment',
      reason: `The test runner ${runner} is not installed: "${missingRunner.line}".`,
      advice:
        `Install ${runner} in the project environment (${installHint(missingRunner)}) so the tests can run. ` +
        'Not a code failure.',
    };
  }
  const invalid = firstLineMatching(output.lines, INVALID_COMMAND);
  if (invalid) {
    return {
      failure_class: 'environment',
      reason: `The runner rejected the test command: "${invalid}".`,
      advice:
        'Fix the test command (paths and options), e.g. toolchain.test in .guardkit/config.yaml. Not a code failure.',
    };
  }
  if (missingDependency) {
    const dependency = packageNameOf(missingDependency);
    return {
      failure_class: 'environment',
      reason: `A third-party dependency is not installed: "${missingDependency.line}".`,
      advice:
        `Install ${dependency} in the project environment (${installHint(missingDependency)}) and declare it in the ` +
        'dependency file; if the code should not need it, remove the import.',
    };
  }
  return undefined;
}

function installHint(module: MissingModule): string {
  const name = packageNameOf(module);
  return module.language === 'python'
    ? `python -m pip install ${name} in the project virtualenv`
    : `npm install --save-dev ${name}`;
}

interface InfrastructureCause {
  pattern: RegExp;
  what: string;
  advice: string;
}

const MOCK_OR_DESELECT =
  'mark the test as integration (e.g. @pytest.mark.integration, deselected by default with -m "not integration") ' +
  'so the default run does not need it. Not a code failure.';

// A DB OperationalError is infrastructure only when it is about reaching the database; "no such
// table" is the code's (missing migration or create_all).
const INFRASTRUCTURE_CAUSES: readonly InfrastructureCause[] = [
  {
    pattern:
      /ECONNREFUSED|ConnectionRefusedError|Connection refused|could not connect to server|connection to server at .* failed|Can't connect to (?:MySQL|local MySQL) server|Error \d+ connecting to|ServerSelectionTimeoutError|Cannot connect to the Docker daemon/,
    what: 'a service that is not running (connection refused)',
    advice:
      'The test talks to a real service. Mock the service in a fixture (or use an in-memory fake), use SQLite ' +
      `in-memory for database tests, or ${MOCK_OR_DESELECT}`,
  },
  {
    pattern:
      /OperationalError\b.*(?:unable to open database|could not connect|Connection refused|connection to server|timeout expired|password authentication failed|does not exist|Can't connect)/,
    what: 'a database that cannot be reached (OperationalError)',
    advice:
      'The test needs a real database. Use SQLite in-memory (sqlite:///:memory:) or a fixture-provided test ' +
      `database, mock the repository layer, or ${MOCK_OR_DESELECT}`,
  },
  {
    pattern:
      /getaddrinfo (?:ENOTFOUND|EAI_AGAIN)|EAI_AGAIN|Name or service not known|Temporary failure in name resolution|nodename nor servname provided|Network is unreachable|ENETUNREACH|EHOSTUNREACH|No route to host/,
    what: 'the network (host lookup or route failed)',
    advice:
      'The test reaches the network. Mock the HTTP or client call (responses, respx, nock, msw, a fake client ' +
      `injected in a fixture), or ${MOCK_OR_DESELECT}`,
  },
];

function infrastructureClass(
  output: ScannedOutput,
  serviceClient: MissingModule | undefined,
): FailureClassification | undefined {
  for (const cause of INFRASTRUCTURE_CAUSES) {
    const evidence = firstLineMatching(output.lines, cause.pattern);
    if (evidence) {
      return {
        failure_class: 'infrastructure',
        reason: `The tests need ${cause.what}: "${evidence}".`,
        advice: cause.advice,
      };
    }
  }
  if (serviceClient) {
    const client = packageNameOf(serviceClient);
    return {
      failure_class: 'infrastructure',
      reason: `The tests import the service client ${client}, which is not installed: "${serviceClient.line}".`,
      advice:
        `Code under test needs an external service through ${client}. Mock that client in a fixture (or inject a ` +
        `fake), use SQLite in-memory for database tests, or ${MOCK_OR_DESELECT} If the real client is wanted, ` +
        `install ${client} and provide the service.`,
    };
  }
  return undefined;
}

function missingFirstPartyClass(
  module: MissingModule | undefined,
): FailureClassification | undefined {
  if (!module) return undefined;
  const isMissingPythonModule =
    module.language === 'python' && !/cannot import name/.test(module.line);
  const importer = /imported from (\S+)/.exec(module.line)?.[1];
  const expected = isMissingPythonModule
    ? ` (expected at ${pythonModulePaths(module.specifier)})`
    : importer && module.specifier.startsWith('.')
      ? ` (relative to ${importer})`
      : '';
  return {
    failure_class: 'code',
    reason: `The code imports a first-party module that does not exist or lacks the name: "${module.line}".`,
    advice: `Create ${module.specifier}${expected} with what the tests import, or fix the import to point at existing code.`,
  };
}

function pythonModulePaths(dotted: string): string {
  const base = dotted.split('.').join('/');
  return `${base}.py or ${base}/__init__.py`;
}

const SYNTAX_ERROR =
  /\b(?:SyntaxError|IndentationError|TabError)\b|Transform failed with \d+ error/;

function syntaxClass(output: ScannedOutput): FailureClassification | undefined {
  const { lines } = output;
  const index = lines.findIndex((line) => SYNTAX_ERROR.test(line));
  if (index < 0) return undefined;
  const statement = quoteLine(lines[index] ?? '');
  const location = syntaxLocation(lines, index);
  const duringCollection =
    /ERROR collecting|during collection|Failed Suites|Test suite failed to run/.test(output.text);
  return {
    failure_class: 'code',
    reason:
      `Syntax error${location ? ` in ${location}` : ''}: "${statement}".` +
      (duringCollection
        ? ' It surfaced while collecting tests, but it is an error in the code, not in test discovery.'
        : ''),
    advice: `Fix the syntax at ${location ?? 'the location named in the summary'} and re-run the tests.`,
  };
}

/** The file and line reported just above a syntax error (Python's `File "x", line N`, Node's `file:///x:N`). */
function syntaxLocation(lines: readonly string[], index: number): string | undefined {
  for (let line = index; line >= Math.max(0, index - 6); line -= 1) {
    const text = lines[line] ?? '';
    const python = /File "([^"]+)", line (\d+)/.exec(text);
    if (python) return `${python[1]}:${python[2]}`;
    const node = /^(?:file:\/\/)?(\/\S+?):(\d+)$/.exec(text.trim());
    if (node) return `${node[1]}:${node[2]}`;
  }
  return firstProjectLocation(lines.slice(index).join('\n'));
}

const COLLECTION_ERROR =
  /ERROR collecting|Interrupted: \d+ errors? during collection|ImportError while importing test module|ImportError while loading conftest|Failed Suites \d+|Test suite failed to run/;

function collectionClass(
  output: ScannedOutput,
  unimportableRoot: MissingModule | undefined,
): FailureClassification | undefined {
  if (unimportableRoot) {
    const root = packageNameOf(unimportableRoot);
    return {
      failure_class: 'collection',
      reason: `The first-party package ${root} exists in the repository but is not importable from the tests: "${unimportableRoot.line}".`,
      advice:
        'Put the repository root on the import path: pythonpath = ["."] under [tool.pytest.ini_options], an empty ' +
        'conftest.py at the repository root, or install the project in the virtualenv (pip install -e .).',
    };
  }
  const evidence = firstLineMatching(output.lines, COLLECTION_ERROR);
  if (!evidence) return undefined;
  const file = /ERROR collecting (\S+)|test module '([^']+)'|conftest '([^']+)'/
    .exec(output.text)
    ?.slice(1)
    .find(Boolean);
  const cause = firstErrorStatement(output.lines);
  return {
    failure_class: 'collection',
    reason: `Tests could not be collected: "${evidence}"${cause ? `, caused by "${cause}"` : ''}.`,
    advice: `Fix the import or module-level error in ${file ?? 'the test file named in the summary'} so the runner can load it, then re-run.`,
  };
}

function signalClass(signal: string | null | undefined): FailureClassification | undefined {
  if (!signal) return undefined;
  return {
    failure_class: 'environment',
    reason: `The test process was killed by ${signal} before it finished${signal === 'SIGKILL' ? ' (often the out-of-memory killer)' : ''}.`,
    advice:
      'Re-run the tests; if it happens again, run the test files one by one to find the one that exhausts memory ' +
      'or crashes the process, and check the machine limits.',
  };
}

function codeClass(output: ScannedOutput, facts: FailureFacts): FailureClassification {
  const statement = firstErrorStatement(output.lines);
  const location = firstProjectLocation(output.text);
  if (facts.status === 'error' && !statement) {
    return {
      failure_class: 'environment',
      reason: `The runner exited with code ${facts.exit_code ?? 'none'} without a test result or a recognisable error.`,
      advice:
        'Run the test command by hand in the workspace and read its output; the summary holds its last lines.',
    };
  }
  const where = location ? ` at ${location}` : '';
  return {
    failure_class: 'code',
    reason: statement ? `Tests failed: "${statement}"${where}.` : `Tests failed${where}.`,
    advice: codeAdvice(location, output.text),
  };
}

/**
 * Where to look first. A location in a test is the failing assertion, not the thing to fix: the
 * code under test it reached (the first product frame after it, when the traceback has one) is.
 */
function codeAdvice(location: string | undefined, text: string): string {
  if (!location)
    return 'Fix the code at the first failing location named in the summary, then re-run the tests.';
  if (!isTestSideFile(location.replace(/:\d+$/, '')))
    return `Fix the code at ${location} (the first failure), then re-run the tests.`;
  const locations = projectLocations(text);
  const product = locations
    .slice(locations.indexOf(location) + 1)
    .find((item) => !isTestSideFile(item.replace(/:\d+$/, '')));
  return product
    ? `The first failure is the test's assertion at ${location}; the code under test it reached is at ${product}. Fix the code there (not the test), then re-run the tests.`
    : `The first failure is the test's assertion at ${location}: fix the code under test it checks (not the test), then re-run the tests.`;
}
