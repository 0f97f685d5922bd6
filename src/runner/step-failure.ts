import type { FailureClassification } from './report/types.js';
import { quoteLine } from './report/locate.js';
import { isResultLine } from './report/summary-lines.js';

/**
 * Output of lint, format and type-check tools that failed (eslint, prettier, tsc, ruff, flake8, black,
 * mypy). Counts start at 1: `Found 0 errors.` is a tool that passed.
 */
const STEP_EVIDENCE: ReadonlyArray<{ tool: string; pattern: RegExp }> = [
  { tool: 'eslint', pattern: /^✖ [1-9]\d* problems? \(\d+ errors?/ },
  { tool: 'prettier', pattern: /\[warn\] Code style issues (?:found|were found)/ },
  { tool: 'tsc', pattern: /\berror TS\d+: / },
  { tool: 'ruff', pattern: /^Found [1-9]\d* errors?\.?$/ },
  { tool: 'flake8', pattern: /^\S+\.py:\d+:\d+: [EFWC]\d{3} / },
  { tool: 'black', pattern: /^would reformat |files? would be reformatted/ },
  { tool: 'mypy', pattern: /^Found [1-9]\d* errors? in \d+ files?/ },
];

/**
 * A step that could not reach the network (`npm audit`, a download): host lookup, refused or reset
 * connections, npm's `network request … failed`.
 */
const NETWORK_FAILURE =
  /\b(?:ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH)\b|network request to \S+ failed|Temporary failure in name resolution|Name or service not known|Network is unreachable/;

/** npm and pnpm announce each script they run as `> [package@version] name` then `> command`. */
const ANNOUNCED = /^> (.+)$/;
// A TAP plan or TAP/node counters close a test run too.
const RESULTS_END = /^(?:1\.\.\d+|# (?:tests|pass|fail) +\d+)\s*$/;

interface Step {
  name?: string;
  command?: string;
  /** Where its output starts. */
  index: number;
}

/**
 * A step of the test command other than the tests failed: a lint, format or type-check step (or a
 * build) before any test ran, or a `pretest`/`posttest` script or a later command of a chain
 * (`lint && runner && typecheck`) after they all passed. Only output after the last result line is
 * searched, so a linter that passed before the tests is never blamed, and npm's last announced script
 * names the step. A step that could not reach the network is `environment`.
 * `script` is the test command as written, to name the command of a chain that failed.
 */
export function stepFailureClass(
  lines: readonly string[],
  script?: string,
): FailureClassification | undefined {
  const resultsEnd = lines.findLastIndex((line) => isResultLine(line) || RESULTS_END.test(line));
  const after = resultsEnd + 1;
  const announced = lastAnnouncedStep(lines, after);
  // With no result at all, npm's `test` script itself is the tests, not a step around them.
  const step = announced?.name === 'test' && resultsEnd < 0 ? undefined : announced;
  const from = step?.index ?? after;
  const evidenceIndex = lines.findIndex(
    (line, index) => index >= from && STEP_EVIDENCE.some((evidence) => evidence.pattern.test(line)),
  );
  const networkIndex = lines.findIndex(
    (line, index) => index >= from && NETWORK_FAILURE.test(line),
  );
  const testsPassed = resultsEnd >= 0;
  // Tests that passed under a failing exit with nothing after them (a suite that failed to load,
  // a coverage threshold) are the runner's own verdict, not a step's.
  if (!step && evidenceIndex < 0 && (networkIndex < 0 || !testsPassed)) return undefined;

  const tool = STEP_EVIDENCE.find((evidence) =>
    evidence.pattern.test(lines[evidenceIndex] ?? ''),
  )?.tool;
  const named = stepName(step, tool, script, testsPassed);
  const when = testsPassed ? 'after the tests passed' : 'before any test ran';
  if (networkIndex >= 0 && (step || testsPassed)) {
    const evidence = quoteLine(lines[networkIndex] ?? '');
    return {
      failure_class: 'environment',
      reason: `${capitalise(named)} of the test command failed ${when}: it could not reach the network ("${evidence}").`,
      advice:
        `${capitalise(named)} needs the network, which this machine cannot reach. Run it where the network ` +
        'is available, or keep networked steps (npm audit, downloads) out of the test script. Not a code failure.',
    };
  }
  const build = /build|compile/.test(step?.name ?? '');
  const verdict =
    evidenceIndex >= 0
      ? (lines[evidenceIndex] ?? '').trim()
      : (lines.slice(from).find((line) => /\berror\b/i.test(line)) ??
        firstNonBlank(lines, from) ??
        'no output');
  const first = evidenceIndex >= 0 ? firstReportedProblem(lines, evidenceIndex, from) : undefined;
  return {
    failure_class: build ? 'build' : 'lint',
    reason: `${capitalise(named)} of the test command failed ${when}: "${verdict.trim().slice(0, 200)}".`,
    advice:
      `Fix what ${named} reports${first ? ` (first: ${first})` : ''}, then re-run. ` +
      "It is part of the project's own test command, so the run cannot pass until it does.",
  };
}

/** The last script npm announced at or after `from`: its name and command. */
function lastAnnouncedStep(lines: readonly string[], from: number): Step | undefined {
  for (let line = lines.length - 1; line >= from; line -= 1) {
    if (!ANNOUNCED.test(lines[line] ?? '')) continue;
    // The nearest announced line is the command when the script's name is announced just above it.
    const header = line > from && ANNOUNCED.test(lines[line - 1] ?? '') ? line - 1 : line;
    const name = ANNOUNCED.exec(lines[header] ?? '')![1]!
      .split(' ')
      .pop();
    const command = header < line ? ANNOUNCED.exec(lines[line] ?? '')?.[1] : undefined;
    return { name, command, index: header };
  }
  return undefined;
}

/** How the failing step is named: npm's script, else the chain's command running the tool. */
function stepName(
  step: Step | undefined,
  tool: string | undefined,
  script: string | undefined,
  testsPassed: boolean,
): string {
  if (step?.name) return `the \`${step.name}\` step${step.command ? ` (\`${step.command}\`)` : ''}`;
  const commands = (script ?? '')
    .split(/&&|\|\||;/)
    .map((command) => command.trim())
    .filter(Boolean);
  const running = tool && commands.find((command) => new RegExp(`\\b${tool}\\b`).test(command));
  if (running) return `the \`${running}\` command`;
  if (tool) return `a ${tool} step`;
  return testsPassed ? 'a command after the tests' : 'a step';
}

function firstNonBlank(lines: readonly string[], from: number): string | undefined {
  return lines.slice(from).find((line) => line.trim() !== '' && !ANNOUNCED.test(line));
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The first line before the tool's verdict that names a file and line, as lint tools print them. */
function firstReportedProblem(
  lines: readonly string[],
  verdict: number,
  from: number,
): string | undefined {
  const start = Math.max(from, verdict - 60);
  for (let index = start; index <= verdict; index += 1) {
    const line = (lines[index] ?? '').trim();
    if (/\S+\.\w+[:(]\d+/.test(line) || /^\d+:\d+\s+error\b/.test(line)) return line.slice(0, 200);
  }
  return undefined;
}
