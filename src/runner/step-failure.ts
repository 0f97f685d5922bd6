import type { FailureClassification } from './classify.js';

/** Output of lint, format and type-check tools that failed (eslint, prettier, tsc, ruff, flake8, black, mypy). */
const STEP_EVIDENCE: ReadonlyArray<{ tool: string; pattern: RegExp }> = [
  { tool: 'eslint', pattern: /^✖ \d+ problems? \(\d+ errors?/ },
  { tool: 'prettier', pattern: /\[warn\] Code style issues (?:found|were found)/ },
  { tool: 'tsc', pattern: /\berror TS\d+: / },
  { tool: 'ruff', pattern: /^Found \d+ errors?\.?$/ },
  { tool: 'flake8', pattern: /^\S+\.py:\d+:\d+: [EFWC]\d{3} / },
  { tool: 'black', pattern: /^would reformat |files? would be reformatted/ },
  { tool: 'mypy', pattern: /^Found \d+ errors? in \d+ files?/ },
];

/** npm, pnpm and yarn announce each script they run as `> [package@version] name` then `> command`. */
const ANNOUNCED = /^> (.+)$/;

/**
 * A lint, format or type-check step (or a build) that failed inside the test command before any test
 * ran: the Player must fix what the step reports, and it is neither the environment nor a test failure.
 */
export function stepFailureClass(lines: readonly string[]): FailureClassification | undefined {
  const index = lines.findIndex((line) =>
    STEP_EVIDENCE.some((evidence) => evidence.pattern.test(line)),
  );
  if (index < 0) return undefined;
  const evidence = STEP_EVIDENCE.find((candidate) => candidate.pattern.test(lines[index] ?? ''))!;
  let step: string | undefined;
  let command: string | undefined;
  for (let line = index - 1; line >= 0 && step === undefined; line -= 1) {
    if (!ANNOUNCED.test(lines[line] ?? '')) continue;
    // The nearest announced line is the command when the script's name is announced just above it.
    const header = ANNOUNCED.test(lines[line - 1] ?? '') ? line - 1 : line;
    step = ANNOUNCED.exec(lines[header] ?? '')![1]!
      .split(' ')
      .pop();
    command = ANNOUNCED.exec(lines[header + 1] ?? '')?.[1];
  }
  const build = step !== undefined && /build|compile/.test(step);
  const named = step
    ? `the \`${step}\` step${command ? ` (\`${command}\`)` : ''}`
    : `a ${evidence.tool} step`;
  const first = firstReportedProblem(lines, index);
  return {
    failure_class: build ? 'build' : 'lint',
    reason: `${named} of the test command failed before any test ran: "${(lines[index] ?? '').trim()}".`,
    advice:
      `Fix what ${named} reports${first ? ` (first: ${first})` : ''}, then re-run. ` +
      "It is part of the project's own test command, so the tests cannot run until it passes.",
  };
}

/** The first line before the tool's verdict that names a file and line, as lint tools print them. */
function firstReportedProblem(lines: readonly string[], verdict: number): string | undefined {
  const start = Math.max(0, verdict - 60);
  for (let index = start; index <= verdict; index += 1) {
    const line = (lines[index] ?? '').trim();
    if (/\S+\.\w+[:(]\d+/.test(line) || /^\d+:\d+\s+error\b/.test(line)) return line.slice(0, 200);
  }
  return undefined;
}
