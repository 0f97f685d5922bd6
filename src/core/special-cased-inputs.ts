/**
 * The tests' own inputs in the product: a literal the tests hand to a call or an assertion, compared,
 * branched on or used as a key in the lines the Player added to product code, answers those tests
 * without computing anything. Static by nature: it reads literals, not behaviour, so a value built at
 * runtime (arithmetic, a file, a hash of the input) is not seen; the replay and repetition rules are
 * what observe behaviour.
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
}

export interface ProductLiterals {
  path: string;
  uses: LiteralUse[];
  /** Every literal the base version of the file held: not the Player's doing. */
  held: string[];
}

export interface TestInputFacts {
  inputs: TestInput[];
  product: ProductLiterals[];
}

/** Too common in honest code to say anything about a test. */
const TRIVIAL = new Set(['0', '1', '-1', '""', "''", '()', '-0']);

/** A table holding this many distinct test inputs is a lookup of the tests' answers, wherever it is. */
const TABLE_INPUTS = 3;

/** Findings in the lines the Player added to product code; `code` gives the texts, base and now. */
export function specialCasedInputFindings(
  facts: TestInputFacts,
  code: readonly FileVersions[],
): IntegrityFinding[] {
  const inputs = new Map<string, TestInput>();
  for (const input of facts.inputs)
    if (!TRIVIAL.has(input.value) && !inputs.has(input.value)) inputs.set(input.value, input);
  if (inputs.size === 0) return [];
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
      return [
        {
          kind: 'special_cases_test_input',
          severity: 'must_fix',
          file: file.path,
          line: use.line,
          test: use.value,
          detail: `this added line ${ROLE[use.role]} ${use.value}, a literal of the test's \`${input.assertion}\` (${input.file}:${input.line}): code that answers the tests' own inputs passes them without doing the work. Compute the result; if a criterion names this value, acknowledge it in record_verdict acknowledged_changes [{test: ${JSON.stringify(use.value)}, criterion, reason}]`,
        },
      ];
    });
    return [...tables, ...singles];
  });
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
