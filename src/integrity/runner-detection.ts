import type { FileVersions, IntegrityFinding } from './integrity-types.js';
import { cfgReadsOfTest } from './rust-cfg-reads.js';

/**
 * Product code that asks whether a test runner is running it can behave correctly only under test: the
 * trusted runs run the tests too, so only reading the code shows it. Each pattern names what it reads.
 */
const RUNNER_CHECKS: { pattern: RegExp; what: string }[] = [
  {
    pattern: /\bPYTEST_(?:CURRENT_TEST|VERSION|XDIST_\w+)\b/,
    what: "pytest's environment variables",
  },
  {
    pattern: /["'](?:_?pytest|unittest)["']\s+(?:not\s+)?in\s+sys\.modules/,
    what: 'sys.modules for the runner',
  },
  {
    pattern: /sys\.modules\.get\(\s*["'](?:_?pytest|unittest)["']/,
    what: 'sys.modules for the runner',
  },
  { pattern: /sys\.argv\b.*\b(?:pytest|unittest)\b/, what: 'sys.argv for the runner' },
  {
    pattern: /\b(?:JEST_WORKER_ID|VITEST(?:_\w+)?|NODE_TEST_CONTEXT|MOCHA_\w+)\b/,
    what: "a JS runner's environment variables",
  },
  {
    pattern: /process\.argv\b.*\b(?:jest|vitest|mocha|ava|--test)\b/,
    what: 'process.argv for the runner',
  },
  {
    pattern: /typeof\s+(?:jest|vi|describe|it|expect)\s*[!=]==?\s*["']undefined["']/,
    what: "the runner's globals",
  },
  { pattern: /\btesting\.Testing\(\)|flag\.Lookup\(\s*"test\./, what: "go test's flags" },
];

const COMMENT = /^\s*(?:#|\/\/|\*|\/\*)/;

/** Lines the Player added to product code that detect the test runner: must_fix, with file and line. */
export function runnerDetectionFindings(productCode: readonly FileVersions[]): IntegrityFinding[] {
  const findings: IntegrityFinding[] = [];
  for (const file of productCode) {
    if (file.now === undefined) continue;
    const before = new Set((file.base ?? '').split(/\r?\n/).map((line) => line.trim()));
    const lines = file.now.split(/\r?\n/);
    const added = (line: number) => !before.has(lines[line - 1]!.trim());
    const finding = (line: number, what: string): IntegrityFinding => ({
      kind: 'runner_detection',
      severity: 'must_fix',
      file: file.path,
      line,
      detail: `product code reads ${what}, so it can behave differently under test than in use. Remove the check: the code must do the same thing whoever runs it`,
    });
    // Rust's `cfg` is read by its grammar; the patterns are hints for the other languages.
    if (file.path.endsWith('.rs')) {
      for (const read of cfgReadsOfTest(file.now))
        if (added(read.line))
          findings.push(finding(read.line, `whether it is built for test (${read.what})`));
      continue;
    }
    lines.forEach((text, index) => {
      if (COMMENT.test(text) || !added(index + 1)) return;
      const check = RUNNER_CHECKS.find((item) => item.pattern.test(text));
      if (check)
        findings.push(finding(index + 1, `${check.what} (\`${text.trim().slice(0, 120)}\`)`));
    });
  }
  return findings;
}
