import type { FileVersions, IntegrityFinding } from './integrity-types.js';

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
  { pattern: /\bcfg!\(\s*test\s*\)/, what: 'cfg!(test)' },
  { pattern: /\btesting\.Testing\(\)|flag\.Lookup\(\s*"test\./, what: "go test's flags" },
];

const COMMENT = /^\s*(?:#|\/\/|\*|\/\*)/;

/** Lines the Player added to product code that detect the test runner: must_fix, with file and line. */
export function runnerDetectionFindings(productCode: readonly FileVersions[]): IntegrityFinding[] {
  const findings: IntegrityFinding[] = [];
  for (const file of productCode) {
    if (file.now === undefined) continue;
    const before = new Set((file.base ?? '').split(/\r?\n/).map((line) => line.trim()));
    file.now.split(/\r?\n/).forEach((text, index) => {
      if (COMMENT.test(text) || before.has(text.trim())) return;
      const check = RUNNER_CHECKS.find((item) => item.pattern.test(text));
      if (!check) return;
      findings.push({
        kind: 'runner_detection',
        severity: 'must_fix',
        file: file.path,
        line: index + 1,
        detail: `product code reads ${check.what} (\`${text.trim().slice(0, 120)}\`), so it can behave differently under test than in use. Remove the check: the code must do the same thing whoever runs it`,
      });
    });
  }
  return findings;
}
