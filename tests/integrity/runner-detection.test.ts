import { describe, expect, it } from 'vitest';
import { runnerDetectionFindings } from '../../src/integrity/runner-detection.js';

describe('runnerDetectionFindings', () => {
  it.each([
    ['calc.py', 'import sys\nif "pytest" in sys.modules:\n    pass\n', 2],
    ['calc.py', 'import os\nUNDER_TEST = os.environ.get("PYTEST_CURRENT_TEST")\n', 2],
    ['src/lib.js', 'const t = process.env.JEST_WORKER_ID;\n', 1],
    ['src/lib.ts', 'export const fast = !!process.env.VITEST;\n', 1],
    ['src/lib.js', "if (process.argv.some((a) => a.includes('vitest'))) {}\n", 1],
    ['src/lib.js', 'const ctx = process.env.NODE_TEST_CONTEXT;\n', 1],
    [
      'src/lib.rs',
      'pub fn add(a: i32, b: i32) -> i32 { if cfg!(test) { a + b } else { a - b } }\n',
      1,
    ],
  ])('%s: a line reading the runner is must_fix with its line (%#)', (file, now, line) => {
    const [finding] = runnerDetectionFindings([{ path: file, now }]);
    expect(finding).toMatchObject({ kind: 'runner_detection', severity: 'must_fix', file, line });
  });

  // Rust's cfg is read by its grammar: other spellings of the same predicate are named too.
  it.each([
    ['pub fn f() -> bool { cfg!(not(not(test))) }\n', 1],
    ['pub fn f() -> bool {\n    std::cfg![any(test, miri)]\n}\n', 2],
    ['pub fn f() -> bool {\n    cfg!(\n        test\n    )\n}\n', 2],
    ['#[cfg(not(test))]\npub fn add(a: i32, b: i32) -> i32 { a - b }\n', 1],
    ['#[cfg(any(not(test), target_os = "linux"))]\nconst SHIFT: i32 = 1;\n', 1],
  ])('Rust: a cfg that test decides is must_fix with its line (%#)', (now, line) => {
    const findings = runnerDetectionFindings([{ path: 'src/lib.rs', now }]);
    expect(findings).toEqual([expect.objectContaining({ kind: 'runner_detection', line })]);
  });

  it('Rust: test-only items, other options, strings and comments are no finding', () => {
    const now = [
      '// cfg!(test) in a comment',
      'pub const NOTE: &str = "cfg!(test)";',
      'pub fn unix() -> bool { cfg!(unix) && cfg!(feature = "test") }',
      '#[cfg(all(test, unix))]',
      'mod unix_tests {}',
      '#[cfg(test)]',
      'mod tests {',
      '    #[test]',
      '    fn adds() { assert!(cfg!(test)); }',
      '}',
    ].join('\n');
    const findings = runnerDetectionFindings([{ path: 'src/lib.rs', now }]);
    expect(findings.map((finding) => finding.line)).toEqual([9]);
  });

  it('ignores lines the base already had, comments, and honest code', () => {
    const base = 'import os\nDEBUG = os.environ.get("PYTEST_CURRENT_TEST")\n';
    expect(
      runnerDetectionFindings([
        { path: 'calc.py', base, now: `${base}# PYTEST_CURRENT_TEST is set by pytest\n` },
        { path: 'src/lib.js', now: "const mode = process.env.NODE_ENV ?? 'production';\n" },
      ]),
    ).toEqual([]);
  });
});
