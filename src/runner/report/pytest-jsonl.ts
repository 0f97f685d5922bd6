import path from 'node:path';
import { isTestSideFile } from '../../scope/test-paths.js';
import {
  equalityByTypeMessage,
  HARNESS_CHANGED,
  harnessReplacedMessage,
  type PassedByType,
  processEndedCase,
  type ProcessEnd,
} from '../harness-case.js';
import { clipMessage } from './text.js';
import type { ParametrizedCase, TestCaseResult, TestStatus } from './types.js';

/** One line of coachgate's pytest plugin (src/runner/pytest-reporter.ts). */
type ReportLine =
  | { event: 'start'; pytest: string }
  | {
      event: 'test';
      nodeid: string;
      when: 'setup' | 'call' | 'teardown';
      outcome: string;
      xfail?: string;
      message?: string;
    }
  | { event: 'collect'; nodeid: string; outcome: string; message?: string }
  | { event: 'case'; nodeid: string; test: string; values: string }
  | { event: 'internal'; message?: string }
  | { event: 'harness'; nodeid: string; changed: string[] }
  | ({ event: 'exit' } & ProcessEnd)
  | { event: 'loaded'; files: string[]; read?: [string, string][] }
  | { event: 'plugins'; nodeid: string; files: string[] }
  | { event: 'bytecode'; nodeid: string; files: string[] }
  | { event: 'startup'; files: string[] }
  | ({ event: 'equality' } & PassedByType);

/** What one JUnit `<testcase>` would hold: its outcome elements, in the order pytest added them. */
interface TestCase {
  id: string;
  outcomes: Array<{ status: TestStatus; message?: string }>;
}

/** A case's status is its weightiest outcome, as the JUnit parser reads a `<testcase>`. */
const STATUS_WEIGHT: Record<TestStatus, number> = { failed: 3, error: 2, skipped: 1, passed: 0 };

/**
 * Folds the plugin's report lines into per-test results with exactly the statuses pytest's
 * `--junitxml` gives (its junitxml.py): setup failure → error, call failure → failed, a failed
 * call whose teardown also fails → two cases (failed, then error), xfail → skipped, non-strict
 * xpass → passed, strict xpass → failed, collection error → error and a skipped module → skipped
 * under the module's node id. A parametrized case carries its test function and values. A last
 * line without its newline (the run was killed while writing it) is left out; any other unreadable
 * line makes the report unreadable.
 */
export function parsePytestReportLines(text: string, root?: string): TestCaseResult[] {
  const cases: TestCase[] = [];
  const open = new Map<string, TestCase>();
  const failedCalls = new Set<string>();
  const parametrized = new Map<string, ParametrizedCase>();
  const openCase = (id: string): TestCase => {
    let found = open.get(id);
    if (!found) {
      found = { id, outcomes: [] };
      open.set(id, found);
      cases.push(found);
    }
    return found;
  };
  for (const line of completeLines(text)) {
    const record = JSON.parse(line) as ReportLine;
    if (record.event === 'case') {
      parametrized.set(record.nodeid, { function: record.test, values: record.values });
    } else if (record.event === 'collect') {
      const status = record.outcome === 'failed' ? 'error' : 'skipped';
      openCase(record.nodeid).outcomes.push({ status, message: record.message });
    } else if (record.event === 'harness') {
      openCase(HARNESS_CHANGED).outcomes.push({
        status: 'error',
        message: harnessReplacedMessage(record.nodeid, record.changed),
      });
    } else if (record.event === 'exit') {
      const ended = processEndedCase(record);
      openCase(ended.id).outcomes.push({ status: 'error', message: ended.message });
    } else if (record.event === 'plugins') {
      const hooked = root === undefined ? [] : codeHookingPytest(record.files, root);
      if (hooked.length > 0)
        openCase(HARNESS_CHANGED).outcomes.push({
          status: 'error',
          message: `registered with pytest while ${record.nodeid} ran (a plugin from code that is neither a test nor test support): ${hooked.join(', ')}. The code under test must not hook into the test runner.`,
        });
    } else if (record.event === 'bytecode') {
      const files = record.files.map((file) => shownPath(file, root));
      openCase(HARNESS_CHANGED).outcomes.push({
        status: 'error',
        message: `bytecode written during the run was read (by the time ${record.nodeid} ended): ${files.join(', ')}. Python must compile the tree's own sources, or read the server's cache.`,
      });
    } else if (record.event === 'startup') {
      const files = record.files.map((file) => shownPath(file, root));
      openCase(HARNESS_CHANGED).outcomes.push({
        status: 'error',
        message: `ran at the interpreter's start-up, before the test runner and coachgate's watchers: ${files.join(', ')} (a start-up hook Python found on the import path).`,
      });
    } else if (record.event === 'equality') {
      openCase(HARNESS_CHANGED).outcomes.push({
        status: 'error',
        message: equalityByTypeMessage({
          ...record,
          file: shownPath(record.file, root),
          type_file: shownPath(record.type_file, root),
        }),
      });
    } else if (record.event === 'internal') {
      openCase('pytest internal error').outcomes.push({ status: 'error', message: record.message });
    } else if (record.event === 'test') {
      const { nodeid, when } = record;
      const outcome = testOutcome(record);
      if (when === 'teardown' && outcome?.status === 'error' && failedCalls.has(nodeid)) {
        // JUnit keeps one failure per testcase: the teardown error opens a second case.
        open.delete(nodeid);
      }
      if (outcome) openCase(nodeid).outcomes.push(outcome);
      else if (when === 'call' && record.outcome === 'passed') openCase(nodeid);
      if (outcome?.status === 'failed') failedCalls.add(nodeid);
      if (when === 'teardown') {
        openCase(nodeid);
        open.delete(nodeid);
        failedCalls.delete(nodeid);
      }
    }
  }
  return cases.map((testCase) => {
    const result = toResult(testCase);
    const parametrizedCase = parametrized.get(testCase.id);
    return parametrizedCase ? { ...result, case: parametrizedCase } : result;
  });
}

/** The JUnit element one setup/call/teardown report adds, if any. */
function testOutcome(
  record: Extract<ReportLine, { event: 'test' }>,
): { status: TestStatus; message?: string } | undefined {
  if (record.outcome === 'failed') {
    return { status: record.when === 'call' ? 'failed' : 'error', message: record.message };
  }
  if (record.outcome !== 'skipped') return undefined;
  if (record.xfail === undefined) return { status: 'skipped', message: record.message };
  return { status: 'skipped', message: record.xfail.replace(/^reason: /, '') };
}

function toResult(testCase: TestCase): TestCaseResult {
  let chosen: { status: TestStatus; message?: string } = { status: 'passed' };
  for (const outcome of testCase.outcomes) {
    if (STATUS_WEIGHT[outcome.status] > STATUS_WEIGHT[chosen.status]) chosen = outcome;
  }
  const message = chosen.message === undefined ? '' : clipMessage(chosen.message);
  const result: TestCaseResult = { id: testCase.id, status: chosen.status };
  return message ? { ...result, message } : result;
}

/**
 * The registered plugins' files that are the repository's code rather than its tests or test support
 * (conftests, helpers under tests/): installed plugins and the interpreter's are outside `root`.
 */
function codeHookingPytest(files: string[], root: string): string[] {
  return files
    .map((file) => path.relative(root, file).split(path.sep).join('/'))
    .filter((file) => !file.startsWith('../') && !path.isAbsolute(file) && !isTestSideFile(file));
}

/** A file inside `root` by its repository path, any other by its absolute one. */
function shownPath(file: string, root: string | undefined): string {
  const relative = root === undefined ? file : path.relative(root, file);
  return relative.startsWith('..') || path.isAbsolute(relative)
    ? file
    : relative.split(path.sep).join('/');
}

/** The lines that end with a newline: a run killed mid-write leaves its last line partial. */
function completeLines(text: string): string[] {
  const end = text.lastIndexOf('\n');
  return end < 0
    ? []
    : text
        .slice(0, end)
        .split('\n')
        .filter((line) => line !== '');
}

/**
 * The absolute paths of the files whose modules the session imported, and of the tree's files its
 * code read (its last line), or undefined when the run ended before pytest finished the session. A
 * file only the tests read (an expected-value file) is not listed: what the tests read is the
 * base's in the trusted runs, whoever changed it.
 */
export function pytestLoadedFiles(text: string, root: string): string[] | undefined {
  for (const line of completeLines(text).reverse()) {
    if (!line.startsWith('{"event": "loaded"')) continue;
    const record = JSON.parse(line) as Extract<ReportLine, { event: 'loaded' }>;
    const byCode = (record.read ?? [])
      .filter(([, reader]) => !isTestSideFile(shownPath(reader, root)))
      .map(([file]) => file);
    return [...new Set([...record.files, ...byCode])].sort();
  }
  return undefined;
}
