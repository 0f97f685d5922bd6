import { visibleLines } from './text.js';

/**
 * uvu names failing tests only. Under its CLI it heads each file's output with the file's name
 * (relative to the directory it was given), then one progress line per suite (`• ✘  (1 / 2)`,
 * ` math  • •  (2 / 2)`); each failure is `FAIL  "name"` or `FAIL  suite  "name"`.
 */
const PROGRESS = /^\s*(?:\S.*?\s+)?(?:[•✘] ?)*\s*\(\d+ \/ \d+\)\s*$/;
/** uvu's failure line, captured as `suite` and `name`. */
const FAILURE = /^\s*FAIL\s+(?:([^">]+?)\s{2,})?"(.+)"\s*$/;
const TOTAL = /^\s*Total:\s+\d+\s*$/;

/** What a uvu run tells about its tests: the files it ran and the failing tests it named. */
export interface UvuFailuresOnly {
  /** The files uvu headed its output with, as it printed them (relative to its directory). */
  files: string[];
  /** Every failing test, as `name` or `suite > name`. */
  failing: string[];
}

/** uvu's files and failures, or undefined when the output has no uvu `Total:` summary. */
export function uvuFailuresOnly(output: string): UvuFailuresOnly | undefined {
  const lines = visibleLines(output);
  if (!lines.some((line) => TOTAL.test(line))) return undefined;
  const files: string[] = [];
  const failing: string[] = [];
  for (const [index, line] of lines.entries()) {
    const failure = uvuFailureName(line);
    if (failure) failing.push(failure);
    else if (isHeading(line, lines[index + 1])) files.push(line.trim());
  }
  return { files: [...new Set(files)], failing: [...new Set(failing)] };
}

function isHeading(line: string, next: string | undefined): boolean {
  return (
    // A file name at the line's start: a test's own output before a progress line is not one.
    /^\S+\.\w+$/.test(line.trimEnd()) && next !== undefined && PROGRESS.test(next)
  );
}

/** The failing test a uvu `FAIL` line names, as `name` or `suite > name`. */
export function uvuFailureName(line: string): string | undefined {
  const match = FAILURE.exec(line);
  if (!match) return undefined;
  return match[1] ? `${match[1]} > ${match[2]}` : match[2];
}
