import { clipMessage } from './text.js';
import type { TestCaseResult, TestStatus } from './types.js';

/** One line of `go test -json` (cmd/test2json). */
interface GoTestEvent {
  Action?: string;
  Package?: string;
  Test?: string;
  Output?: string;
  /** On a package `fail`: the build that failed; its `build-output` events carry the compiler errors. */
  FailedBuild?: string;
  /** On `build-output` events. */
  ImportPath?: string;
}

interface Entry {
  id: string;
  packageId: string;
  /** The enclosing test's id when this is a subtest. */
  parentId?: string;
  status?: TestStatus;
  output: string[];
}

const FINAL_STATUS: Record<string, TestStatus> = {
  pass: 'passed',
  fail: 'failed',
  skip: 'skipped',
};

// The runner's own framing lines; the test's log lines are what explains a failure.
const FRAMING_LINE = /^\s*(?:=== (?:RUN|PAUSE|CONT|NAME)|--- (?:PASS|FAIL|SKIP):)/;

/**
 * Per-test results from `go test -json` events, ids `pkg/TestName` (`pkg/TestName/subtest` for
 * subtests). A parent test that has subtests is left out unless it failed on its own, so one failing
 * subtest counts once. A package that failed without a failing test (build error, TestMain, panic
 * outside a test) becomes an `error` entry with the package as id.
 */
export function parseGoTestJson(ndjson: string): TestCaseResult[] {
  const tests = new Map<string, Entry>();
  const packages = new Map<string, Entry>();
  const buildOutput = new Map<string, string[]>();

  const { events, failedBuilds } = readEvents(ndjson);
  for (const event of events) {
    if (event.Action === 'build-output' && event.ImportPath) {
      buildOutput.set(event.ImportPath, [
        ...(buildOutput.get(event.ImportPath) ?? []),
        event.Output ?? '',
      ]);
      continue;
    }
    if (!event.Package) continue;
    const entries = event.Test ? tests : packages;
    const id = event.Test ? `${event.Package}/${event.Test}` : event.Package;
    const entry = entries.get(id) ?? newEntry(event.Package, event.Test);
    entries.set(id, entry);
    if (event.Action === 'output' && event.Output) entry.output.push(event.Output);
    const status = event.Action ? FINAL_STATUS[event.Action] : undefined;
    if (status) entry.status = status;
    if (!event.Test && event.Action === 'fail' && event.FailedBuild) {
      entry.output.unshift(...(buildOutput.get(event.FailedBuild) ?? []));
    }
  }

  const failedChildOf = new Map<string, boolean>();
  for (const entry of tests.values()) {
    if (entry.parentId) {
      failedChildOf.set(
        entry.parentId,
        (failedChildOf.get(entry.parentId) ?? false) || entry.status === 'failed',
      );
    }
  }
  const isReported = (entry: Entry): boolean => {
    const hasFailedChild = failedChildOf.get(entry.id);
    return hasFailedChild === undefined || (entry.status === 'failed' && !hasFailedChild);
  };
  const results = [...tests.values()].filter(isReported).map(toResult);

  const packagesWithFailedTests = new Set(
    [...tests.values()]
      .filter((entry) => entry.status === 'failed')
      .map((entry) => entry.packageId),
  );
  for (const pkg of packages.values()) {
    if (pkg.status === 'failed' && !packagesWithFailedTests.has(pkg.id)) {
      results.push({ id: pkg.id, status: 'error', message: clipMessage(logLines(pkg.output)) });
    }
  }
  // Before Go 1.24 a package that does not build has no event at all, only stderr lines.
  for (const [pkg, lines] of failedBuilds)
    if (!packages.has(pkg))
      results.push({ id: pkg, status: 'error', message: clipMessage(lines.join('\n')) });
  return results;
}

/**
 * The JSON events, and the packages that failed to build as go before 1.24 reports them on stderr:
 * `# pkg [pkg.test]`, the compiler's lines, then `FAIL\tpkg [build failed]` (the compiler's lines
 * kept as the package's message).
 */
function readEvents(ndjson: string): {
  events: GoTestEvent[];
  failedBuilds: Map<string, string[]>;
} {
  const events: GoTestEvent[] = [];
  const compilerLines = new Map<string, string[]>();
  const failedBuilds = new Map<string, string[]>();
  let building: string | undefined;
  for (const line of ndjson.split('\n')) {
    // stderr (compiler errors, go command messages) may be interleaved with the JSON stream.
    const event = line.startsWith('{') ? parseEvent(line) : undefined;
    if (event) {
      events.push(event);
      continue;
    }
    const header = /^# (\S+)/.exec(line);
    const failed = /^FAIL\s+(\S+) \[build failed\]/.exec(line);
    if (header) building = header[1]!;
    else if (failed) failedBuilds.set(failed[1]!, compilerLines.get(failed[1]!) ?? [line.trim()]);
    else if (building && line.trim() !== '') {
      const lines = compilerLines.get(building);
      if (lines) lines.push(line.trim());
      else compilerLines.set(building, [line.trim()]);
    }
  }
  return { events, failedBuilds };
}

function newEntry(pkg: string, test: string | undefined): Entry {
  if (!test) return { id: pkg, packageId: pkg, output: [] };
  const entry: Entry = { id: `${pkg}/${test}`, packageId: pkg, output: [] };
  const slash = test.lastIndexOf('/');
  if (slash > 0) entry.parentId = `${pkg}/${test.slice(0, slash)}`;
  return entry;
}

function toResult(entry: Entry): TestCaseResult {
  // A test with no final event was cut off (panic in another test, binary killed).
  const status = entry.status ?? 'error';
  if (status === 'passed') return { id: entry.id, status };
  const log = logLines(entry.output);
  const message = log || (status === 'error' ? 'the test started but never reported a result' : '');
  return message
    ? { id: entry.id, status, message: clipMessage(message) }
    : { id: entry.id, status };
}

function logLines(output: string[]): string {
  return output
    .join('')
    .split('\n')
    .filter((line) => line.trim() !== '' && !FRAMING_LINE.test(line))
    .map((line) => line.trim())
    .join('\n');
}

/**
 * The console text `go test -v` prints, rebuilt from the events (lines that are not events, such as
 * compiler errors on stderr, kept as they are), for the summary and the classifier. Go names a test's
 * `file.go:line` relative to its package; with the module path from go.mod it becomes relative to the
 * project, so the first location names a file the Player can open.
 */
export function goTestText(ndjson: string, modulePath?: string): string {
  const text: string[] = [];
  for (const line of ndjson.split('\n')) {
    const event = line.startsWith('{') ? parseEvent(line) : undefined;
    if (!event) {
      text.push(`${line}\n`);
      continue;
    }
    const output = event.Output ?? '';
    const directory =
      modulePath && event.Test && event.Package?.startsWith(`${modulePath}/`)
        ? event.Package.slice(modulePath.length + 1)
        : undefined;
    text.push(
      directory ? output.replace(/^(\s+)([\w.-]+\.go:\d+: )/, `$1${directory}/$2`) : output,
    );
  }
  return text.join('');
}

function parseEvent(line: string): GoTestEvent | undefined {
  try {
    return JSON.parse(line) as GoTestEvent;
  } catch {
    return undefined;
  }
}
