/** Where a failure points, as `file:line`, and the line that states it, read from test output. */

import { ERROR_STATEMENT } from './error-block.js';

// Each captures the file and the line number.
const LOCATION_PATTERNS: readonly RegExp[] = [
  // pytest's location line under a failure: `tests/test_x.py:7: AssertionError`.
  /^([^\s:]+\.py):(\d+): /gm,
  // Python traceback frames.
  /File "([^"]+)", line (\d+)/g,
  // vitest's `❯ src/math.test.ts:4:42`.
  /❯ (\S+?):(\d+):\d+/g,
  // JS stack frames: `at fn (file:///x/test/a.test.mjs:5:43)`.
  /\bat (?:.*?\()?(?:file:\/\/)?([^\s()]+?):(\d+):\d+\)?$/gm,
  // Rust panics and compiler errors.
  /(?:panicked at | --> )([^\s:]+):(\d+):\d+/g,
  // go test log lines: `    calc_test.go:14: message`.
  /^\s+([\w./-]+\.go):(\d+): /gm,
];

const LIBRARY_PATH =
  /site-packages|\/lib\/python\d|node_modules|^node:|^internal\/|<frozen |\/rustc\/|\/usr\/(?:local\/)?lib\//;

/** The earliest `file:line` in the output that is not in a library or the runtime. */
export function firstProjectLocation(output: string): string | undefined {
  return projectLocations(output)[0];
}

/** Every `file:line` outside libraries and the runtime, in the order the output names them. */
export function projectLocations(output: string): string[] {
  const found: { index: number; location: string }[] = [];
  for (const pattern of LOCATION_PATTERNS) {
    for (const match of output.matchAll(pattern)) {
      const [, file = '', line = ''] = match;
      if (!LIBRARY_PATH.test(file)) found.push({ index: match.index, location: `${file}:${line}` });
    }
  }
  return found.sort((a, b) => a.index - b.index).map((item) => item.location);
}

/** The first line that states an error, without pytest's `E` prefix, at most `limit` characters. */
export function firstErrorStatement(lines: readonly string[], limit = 200): string | undefined {
  return firstLineMatching(lines, ERROR_STATEMENT, limit);
}

/** The first line matching `pattern`, as a quote: trimmed, without pytest's `E` prefix, at most `limit` characters. */
export function firstLineMatching(
  lines: readonly string[],
  pattern: RegExp,
  limit = 200,
): string | undefined {
  const line = lines.find((candidate) => pattern.test(candidate));
  return line === undefined ? undefined : quoteLine(line, limit);
}

/** A line as quoted in a reason: trimmed, without pytest's `E` prefix, at most `limit` characters. */
export function quoteLine(line: string, limit = 200): string {
  return line
    .replace(/^\s*E\s+/, '')
    .trim()
    .slice(0, limit);
}
