/**
 * Finding the first error in test output, and ranking its lines so a short summary keeps the ones
 * that say what failed and where.
 */

/** How a kind of block starts and where it ends. */
interface BlockKind {
  opens: RegExp;
  /**
   * Runner headers (one per failing test) also close the block before them; exception lines do
   * not, since they appear inside runner blocks.
   */
  isHeader: boolean;
  /** Index just past the block's last line, searching no further than `limit`. */
  end(lines: readonly string[], start: number, limit: number): number;
  /** Where the block starts when lines above the opener belong to it; the opener by default. */
  start?(lines: readonly string[], opener: number): number;
}

const MAX_BLOCK_LINES = 400;

// pytest section titles: `____ test_name ____`, `____ ERROR collecting tests/x.py ____`. Traceback
// separators inside a section are spaced (`_ _ _ _`) and do not match.
const PYTEST_SECTION = /^_{3,} \S.* _{3,}$/;
// Captured output belongs to the test; other `---- title ----` lines (generated xml file) do not.
const PYTEST_SECTION_END = /^={3,}|^_{3,} \S.* _{3,}$|^-{3,} (?!Captured )/;
const VITEST_FAIL = /^\s*FAIL {1,2}\S/;
const VITEST_SEPARATOR = /^\s*⎯{3,}/;
const NODE_SPEC_FAIL = /^\s*✖ .*\(\d+(?:\.\d+)?m?s\)/;
const TAP_NOT_OK = /^\s*not ok \d+ /;
const TAP_YAML_END = /^\s*\.\.\.\s*$/;
const JEST_FAIL = /^\s*● (?!Console\b)\S/;
const JEST_SECTION_END = /^(?:Test Suites:|Tests:)/;
const GO_FAIL = /^\s*--- FAIL: /;
const GO_FAIL_NAME = /--- FAIL: (\S+)/;
const CARGO_FAILURE = /^---- .+ stdout ----$/;
const CARGO_SECTION_END = /^(?:---- .+ stdout ----|failures:)$/;
// ava's default reporter: the test's name, a blank line, then `  test/sum.js:3` and the source.
const AVA_LOCATION = /^ {2}(?!\/)[\w.@/-]+\.[cm]?[jt]sx?:\d+$/;
const AVA_BLOCK_END = /^\s*› \S+:\d+:\d+$/;
const PYTHON_TRACEBACK = /^\s*Traceback \(most recent call last\):/;
/** A line that states an error: exception names, compiler errors, panics, shells' "not found". */
export const ERROR_STATEMENT =
  /^\s*(?:E\s{2,}\S|(?:#\s+)?(?:[A-Za-z_][\w.]*)?(?:Error|Exception)(?: \[[\w-]+\])?(?::|\s+while\b)|(?:error|ERROR)(?:\[E\d+\])?:|panic:|thread '.*' panicked|fatal:)|: (?:command )?not found$|No module named /;

const BLOCK_KINDS: readonly BlockKind[] = [
  {
    opens: PYTEST_SECTION,
    isHeader: true,
    end: (lines, start, limit) => endAt(lines, start, limit, PYTEST_SECTION_END),
  },
  {
    opens: VITEST_FAIL,
    isHeader: true,
    end: (lines, start, limit) => endAt(lines, start, limit, VITEST_SEPARATOR),
  },
  { opens: NODE_SPEC_FAIL, isHeader: true, end: endOfIndented },
  {
    opens: TAP_NOT_OK,
    isHeader: true,
    end: (lines, start, limit) => endAfter(lines, start, limit, TAP_YAML_END),
  },
  {
    opens: JEST_FAIL,
    isHeader: true,
    end: (lines, start, limit) => endAt(lines, start, limit, JEST_SECTION_END),
  },
  { opens: GO_FAIL, isHeader: true, start: goTestStart, end: endOfIndented },
  {
    opens: CARGO_FAILURE,
    isHeader: true,
    end: (lines, start, limit) => endAt(lines, start, limit, CARGO_SECTION_END),
  },
  {
    opens: AVA_LOCATION,
    isHeader: false,
    start: avaTestName,
    end: (lines, start, limit) => endAfter(lines, start, limit, AVA_BLOCK_END),
  },
  { opens: PYTHON_TRACEBACK, isHeader: false, end: endOfTraceback },
  { opens: ERROR_STATEMENT, isHeader: false, start: sourceContextAbove, end: endAtBlankLine },
];

/** The first error block in `lines[0, limit)`, or null when none is recognised. */
export function firstErrorBlock(lines: readonly string[], limit = lines.length): string[] | null {
  let headersOnly: { kind: BlockKind; lines: string[] } | undefined;
  for (let index = 0; index < limit; index += 1) {
    const line = lines[index] ?? '';
    const kind = BLOCK_KINDS.find((candidate) => candidate.opens.test(line));
    if (!kind) continue;
    const start = kind.start?.(lines, index) ?? index;
    const end = kind.end(lines, index, Math.min(limit, index + MAX_BLOCK_LINES));
    const block = lines.slice(start, end);
    // vitest lists tests that share one error as consecutive `FAIL` lines above it; jest opens with a
    // `FAIL file` line listing results before its `●` blocks. Such blocks state no error: keep looking.
    if (
      kind.isHeader &&
      !block
        .slice(1)
        .some((candidate) => ERROR_STATEMENT.test(candidate) || LOCATION_OR_DIFF.test(candidate))
    ) {
      headersOnly ??= { kind, lines: [] };
      if (headersOnly.kind === kind)
        headersOnly.lines.push(...block.filter((candidate) => kind.opens.test(candidate)));
      index = Math.max(index, end - 1);
      continue;
    }
    return headersOnly && headersOnly.kind === kind ? [...headersOnly.lines, ...block] : block;
  }
  return headersOnly ? headersOnly.lines : null;
}

function isHeaderLine(line: string): boolean {
  return BLOCK_KINDS.some((kind) => kind.isHeader && kind.opens.test(line));
}

/** The block runs until (not including) a line matching `stop` or the next runner header. */
function endAt(lines: readonly string[], start: number, limit: number, stop: RegExp): number {
  let index = start + 1;
  while (index < limit && !stop.test(lines[index] ?? '') && !isHeaderLine(lines[index] ?? ''))
    index += 1;
  return index;
}

/** The block runs until and including a line matching `stop`. */
function endAfter(lines: readonly string[], start: number, limit: number, stop: RegExp): number {
  let index = start + 1;
  while (index < limit && !stop.test(lines[index] ?? '')) index += 1;
  return Math.min(index + 1, limit);
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

/** The block is its opener plus the lines indented deeper (blank lines included). */
function endOfIndented(lines: readonly string[], start: number, limit: number): number {
  const openerIndent = indentOf(lines[start] ?? '');
  let index = start + 1;
  while (index < limit) {
    const line = lines[index] ?? '';
    if (line.trim() !== '' && indentOf(line) <= openerIndent) break;
    index += 1;
  }
  return index;
}

/** A Python traceback ends with its first unindented line: the exception. */
function endOfTraceback(lines: readonly string[], start: number, limit: number): number {
  let index = start + 1;
  while (index < limit && (lines[index] === '' || /^\s/.test(lines[index] ?? ''))) index += 1;
  return Math.min(index + 1, limit);
}

/** cargo prints an error's causes after it, each a blank line and `Caused by:` (the cause is below). */
const CAUSED_BY = /^Caused by:$/;

function endAtBlankLine(lines: readonly string[], start: number, limit: number): number {
  let index = start + 1;
  for (;;) {
    while (index < limit && (lines[index] ?? '').trim() !== '') index += 1;
    if (index + 1 >= limit || !CAUSED_BY.test(lines[index + 1] ?? '')) return index;
    index += 2;
  }
}

// The first line of a compile error's context: Node's `file:///x/a.test.mjs:3`, Python's `File "x.py", line 2`.
const CONTEXT_LOCATION = /^(?:file:\/\/)?\S+:\d+$|^\s*File "[^"]+", line \d+/;
const MAX_CONTEXT_LINES = 3;

/**
 * A syntax error printed without a traceback has its location, the source line and a caret just
 * above it (Node leaves a blank line in between); other lines above an error are not its context.
 */
function sourceContextAbove(lines: readonly string[], opener: number): number {
  const end = opener > 0 && (lines[opener - 1] ?? '').trim() === '' ? opener - 1 : opener;
  let start = end;
  while (start > end - MAX_CONTEXT_LINES && start > 0 && (lines[start - 1] ?? '').trim() !== '')
    start -= 1;
  const first = lines[start] ?? '';
  return start < end && CONTEXT_LOCATION.test(first) && !LIBRARY_LINE.test(first) ? start : opener;
}

/** ava names the failing test two lines above its location, a blank line between them. */
function avaTestName(lines: readonly string[], opener: number): number {
  const name = lines[opener - 2] ?? '';
  return (lines[opener - 1] ?? '').trim() === '' && /^ {2}\S/.test(name) ? opener - 2 : opener;
}

const GO_LOOKBACK_LINES = 200;

/** With -v, go prints a test's log lines between its `=== RUN` line and its `--- FAIL` line. */
function goTestStart(lines: readonly string[], opener: number): number {
  const name = GO_FAIL_NAME.exec(lines[opener] ?? '')?.[1];
  for (
    let index = opener - 1;
    name && index >= Math.max(0, opener - GO_LOOKBACK_LINES);
    index -= 1
  ) {
    if ((lines[index] ?? '').trim() === `=== RUN   ${name}`) return index;
  }
  return opener;
}

/** Lines of a condensed block are kept tier by tier, lowest number first. */
export type LineTier = 0 | 1 | 2 | 3;

// Where the failure is and what was compared: pytest's `>` line and `file.py:12:` location, vitest's
// `❯ file:line`, a stack frame, a diff line, a caret under the offending code, TAP's diagnostics.
const LOCATION_OR_DIFF =
  /^(?:>\s|\s*❯ \S+:\d+|\s*[^\s:()]+\.\w+:\d+(?::\d+)?(?::|$)|\s*at .*:\d+:\d+\)?$|\s*[+-] |\s*\+ actual - expected|\s*[\^~]+\s*$|\s*(?:location|error|expected|actual):)/;
// Frames and source from libraries and the runtime rarely say what to fix.
const LIBRARY_LINE =
  /site-packages|\/lib\/python\d|node_modules|node:internal|\(node:|<frozen |^\s*\?\?\?$|\/rustc\/|^\s+\d+: /;
// Python frames whose source lines follow: `path:12: in function` (pytest short and collection
// tracebacks) and `File "path", line 12, in function`.
const LOCATION_BEFORE_SOURCE = /^\s*(?:\S+:\d+: in \S|File "[^"]+", line \d+)/;
// pytest's long tracebacks put the frame's location after its source: `path:12: ErrorName`.
const LOCATION_AFTER_SOURCE = /^\S+:\d+: (?!in )/;
// Separates the frames of a pytest long traceback.
const PYTEST_FRAME_SEPARATOR = /^(?:_ )+_\s*$/;

/**
 * A tier per line of an error block. 0: the first line and the lines that state the error; 1:
 * location, pointer and diff lines; 2: other lines (the source around the failure); 3: frames of
 * libraries and the runtime, with their source (left out when the block is shortened).
 */
export function blockLineTiers(block: readonly string[]): LineTier[] {
  const tiers = block.map((line, index): LineTier => {
    if (index === 0 || ERROR_STATEMENT.test(line)) return 0;
    if (LIBRARY_LINE.test(line)) return 3;
    return LOCATION_OR_DIFF.test(line) ? 1 : 2;
  });
  const demote = (index: number): void => {
    if (tiers[index] !== 0) tiers[index] = 3;
  };

  let frameStart = 0;
  for (let index = 0; index <= block.length; index += 1) {
    if (index < block.length && !PYTEST_FRAME_SEPARATOR.test(block[index] ?? '')) continue;
    const frame = block.slice(frameStart, index);
    const location = frame.findLast((line) => LOCATION_AFTER_SOURCE.test(line));
    if (location && LIBRARY_LINE.test(location))
      for (let line = frameStart; line < index; line += 1) demote(line);
    frameStart = index + 1;
  }

  let inLibraryFrame = false;
  block.forEach((line, index) => {
    if (LOCATION_BEFORE_SOURCE.test(line)) inLibraryFrame = LIBRARY_LINE.test(line);
    else if (!/^\s/.test(line)) inLibraryFrame = false;
    else if (inLibraryFrame) demote(index);
  });
  return tiers;
}
