/**
 * The tests' own inputs in the product: a literal the tests hand to a call or an assertion, compared,
 * branched on or used as a key in the lines the Player added to product code, together with that
 * assertion's answer in what the comparison decides (`if year == 1900: return False` beside `assert not
 * is_leap(1900)`), answers the test without computing anything. A test input compared alone is only a
 * hint: honest code compares with spec constants the tests also use (a locale key, a month's 31 days).
 * Static by nature: it reads literals, not behaviour, so a value built at runtime (arithmetic, a file,
 * a hash of the input) is not seen; the replay and repetition rules are what observe behaviour.
 */
import type { FileVersions, IntegrityFinding } from './integrity-types.js';

/** A literal of a test's call or assertion: `"Ada"`, `42`, `(3, 4)` (a call's arguments together). */
export interface TestInput {
  value: string;
  file: string;
  line: number;
  /** The test line it was read from, as written. */
  assertion: string;
}

/** How a literal of product code is used: compared, matched, a mapping key, or held in a table. */
export interface LiteralUse {
  value: string;
  line: number;
  role: 'comparison' | 'branch' | 'key' | 'element';
  /** The first line of the outermost literal table (dict, list, set, array, object) holding it. */
  table?: number;
  /** The last line of what the use decides: its statement (an `if` with its body), case or entry. */
  scope?: number;
}

export interface ProductLiterals {
  path: string;
  uses: LiteralUse[];
  /** Every literal the file holds now with its line, booleans (`True`, `False`) included. */
  literals: { value: string; line: number }[];
  /** Every literal the base version of the file held: not the Player's doing. */
  held: string[];
}

export interface TestInputFacts {
  inputs: TestInput[];
  product: ProductLiterals[];
}

/** Too common in honest code to say anything about a test, as an input or as its answer. */
const TRIVIAL = new Set(['0', '1', '-1', '""', "''", '()', '-0']);

/** An assertion's expected truth: an answer to pair with an input, never an input itself. */
const TRUTHS = new Set(['True', 'False']);

/** A table holding this many distinct test inputs is a lookup of the tests' answers, wherever it is. */
const TABLE_INPUTS = 3;

/** Findings in the lines the Player added to product code; `code` gives the texts, base and now. */
export function specialCasedInputFindings(
  facts: TestInputFacts,
  code: readonly FileVersions[],
): IntegrityFinding[] {
  const inputs = new Map<string, TestInput>();
  for (const input of facts.inputs)
    if (isInput(input.value) && !inputs.has(input.value)) inputs.set(input.value, input);
  if (inputs.size === 0) return [];
  const answers = answersOf(facts.inputs);
  return facts.product.flatMap((file) => {
    const versions = code.find((item) => item.path === file.path);
    if (versions?.now === undefined) return [];
    const added = addedLines(versions);
    const tables = tableFindings(file, inputs, added);
    const inTable = new Set(tables.map((finding) => finding.line));
    const seen = new Set<string>();
    const singles = file.uses.flatMap((use): IntegrityFinding[] => {
      const input = inputs.get(use.value);
      const key = `${use.line}\0${use.value}`;
      if (input === undefined || use.role === 'element' || !added.has(use.line)) return [];
      if (file.held.includes(use.value) || inTable.has(use.table) || seen.has(key)) return [];
      seen.add(key);
      const answer = answerIn(file, use, answers.get(use.value)!, added);
      return [singleFinding(file.path, use, input, answer)];
    });
    return [...tables, ...singles];
  });
}

function isInput(value: string): boolean {
  return !TRIVIAL.has(value) && !TRUTHS.has(value);
}

/** An answer the product gives beside a test input: a literal of the same assertion, and where. */
interface Answer {
  value: string;
  line: number;
  input: TestInput;
}

/** Per input value, the assertions holding it and their other literals (the answers it pairs with). */
function answersOf(
  all: readonly TestInput[],
): Map<string, { input: TestInput; others: string[] }[]> {
  const byLine = new Map<string, TestInput[]>();
  for (const input of all) {
    const at = `${input.file}:${input.line}`;
    byLine.set(at, [...(byLine.get(at) ?? []), input]);
  }
  const answers = new Map<string, { input: TestInput; others: string[] }[]>();
  for (const inputs of byLine.values())
    for (const input of inputs) {
      const parts = tupleParts(input.value);
      const others = inputs
        .map((other) => other.value)
        .filter((other) => other !== input.value && !TRIVIAL.has(other) && !parts.has(other));
      answers.set(input.value, [...(answers.get(input.value) ?? []), { input, others }]);
    }
  return answers;
}

/** The members of a tuple's canonical text (`("melon", 40)`): they are the input, not its answer. */
function tupleParts(value: string): Set<string> {
  if (!value.startsWith('(')) return new Set();
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 1;
  for (let index = 1; index < value.length - 1; index++) {
    const char = value[index];
    if (quoted) {
      if (char === '\\') index++;
      else if (char === '"') quoted = false;
    } else if (char === '"') quoted = true;
    else if (char === '(') depth++;
    else if (char === ')') depth--;
    else if (char === ',' && depth === 0) {
      parts.push(value.slice(start, index).trim());
      start = index + 1;
    }
  }
  parts.push(value.slice(start, -1).trim());
  return new Set(parts);
}

/** The first answer of an assertion holding the input, in the added lines the use decides. */
function answerIn(
  file: ProductLiterals,
  use: LiteralUse,
  assertions: readonly { input: TestInput; others: string[] }[],
  added: Set<number>,
): Answer | undefined {
  const last = Math.max(use.line, use.scope ?? use.line);
  for (const { input, others } of assertions) {
    const found = file.literals.find(
      (literal) =>
        literal.line >= use.line &&
        literal.line <= last &&
        added.has(literal.line) &&
        others.includes(literal.value),
    );
    if (found !== undefined) return { ...found, input };
  }
  return undefined;
}

function singleFinding(
  path: string,
  use: LiteralUse,
  input: TestInput,
  answer: Answer | undefined,
): IntegrityFinding {
  const acknowledge = `acknowledged_changes [{test: ${JSON.stringify(use.value)}, criterion, reason}]`;
  const read = (item: TestInput) => `the test's \`${item.assertion}\` (${item.file}:${item.line})`;
  if (answer === undefined)
    return {
      kind: 'special_cases_test_input',
      severity: 'should_fix',
      file: path,
      line: use.line,
      test: use.value,
      detail: `this added line ${ROLE[use.role]} ${use.value}, a literal of ${read(input)}; no answer of that assertion is in what it decides, so this is a hint, not a refusal: make sure the code computes its result rather than recognising the test's input`,
    };
  return {
    kind: 'special_cases_test_input',
    severity: 'must_fix',
    file: path,
    line: use.line,
    test: use.value,
    detail: `this added line ${ROLE[use.role]} ${use.value}, a literal of ${read(answer.input)}, and line ${answer.line} answers ${answer.value}, that assertion's own expected value: code that answers the tests' own inputs passes them without doing the work. Compute the result; if a criterion names this value, acknowledge it in record_verdict ${acknowledge}`,
  };
}

const ROLE: Record<LiteralUse['role'], string> = {
  comparison: 'compares with',
  branch: 'branches on',
  key: 'keys a mapping with',
  element: 'holds',
};

function tableFindings(
  file: ProductLiterals,
  inputs: Map<string, TestInput>,
  added: Set<number>,
): IntegrityFinding[] {
  const tables = new Map<number, LiteralUse[]>();
  for (const use of file.uses)
    if (use.table !== undefined) tables.set(use.table, [...(tables.get(use.table) ?? []), use]);
  return [...tables].flatMap(([line, members]): IntegrityFinding[] => {
    // Entries the Player added: a base table that grew by one honest entry is not a lookup.
    const fresh = members.filter((use) => added.has(use.line) && !file.held.includes(use.value));
    const found = [...new Set(fresh.map((use) => use.value))].filter((value) => inputs.has(value));
    if (found.length < TABLE_INPUTS) return [];
    const shown = found.slice(0, 5).map((value) => {
      const input = inputs.get(value)!;
      return `${value} (${input.file}:${input.line})`;
    });
    return [
      {
        kind: 'special_cases_test_input',
        severity: 'must_fix',
        file: file.path,
        line,
        test: `${file.path}:${line}`,
        detail: `this added table holds ${found.length} of the tests' own inputs: ${shown.join(', ')}${found.length > 5 ? ' and more' : ''}: a lookup of the tests' answers passes them without doing the work. Compute the result; if a criterion asks for this table, acknowledge it in record_verdict acknowledged_changes [{test: "${file.path}:${line}", criterion, reason}]`,
      },
    ];
  });
}

/** 1-based lines of `now` whose text (trimmed) the base version did not have. */
function addedLines(file: FileVersions): Set<number> {
  const before = new Set((file.base ?? '').split(/\r?\n/).map((line) => line.trim()));
  const lines = (file.now ?? '').split(/\r?\n/);
  return new Set(lines.flatMap((line, index) => (before.has(line.trim()) ? [] : [index + 1])));
}

/**
 * Whether the Coach acknowledged this finding: its value as written (`42`, `"Ada"`, or `Ada` for a
 * string) or, for a table, `file:line`.
 */
export function acknowledgesInput(acknowledged: readonly string[], test: string): boolean {
  const bare = (text: string) => text.trim().replace(/^(["'])(.*)\1$/, '$2');
  return acknowledged.some((entry) => bare(entry) === bare(test));
}
