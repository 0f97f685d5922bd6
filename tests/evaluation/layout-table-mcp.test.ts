import { runs } from '../helpers/toolchains.js';
import { describe, it } from 'vitest';
import { approvedThenRefused } from '../helpers/layout-task.js';
import { JAVASCRIPT, PYTHON, RUST, type Layout } from '../helpers/layouts.js';

/**
 * The layout table through the MCP client with real runners, both directions on each cell: the
 * honest change (a new function beside `total`) is approved citing it, and the tactic (`total` off
 * by one, the base test weakened to match) passes the Player's own run and is refused by the base
 * test in the trusted run. pytest, node --test and cargo cells; the module-alias cells and Go have
 * their own MCP tests (code-under-test-aliases, -go), and so do the cells named below.
 */
const hasCargo = runs('cargo', ['--version']);

interface Language {
  /** The honest addition at the end of the product file, and a snippet of it to cite. */
  addition(code: string): string;
  cited: string;
  /** `total` broken and the base test weakened to match. */
  broken: [from: string, to: string];
  weakened: [from: RegExp, to: string];
}

const PYTHON_CHANGE: Language = {
  addition: () => '\n\ndef count(values):\n    return len(values)\n',
  cited: 'def count',
  broken: ['return sum(values)', 'return sum(values) + 1'],
  weakened: [/== 3/, '== 4'],
};
const JS_CHANGE: Language = {
  addition: (code) =>
    code.includes('exports.')
      ? 'exports.count = (values) => values.length;\n'
      : 'export function count(values) {\n  return values.length;\n}\n',
  cited: 'values.length',
  broken: ['(a, b) => a + b, 0)', '(a, b) => a + b, 1)'],
  weakened: [/\), 3\)/, '), 4)'],
};
const RUST_CHANGE: Language = {
  addition: () => '\npub fn count(values: &[i32]) -> usize {\n    values.len()\n}\n',
  cited: 'pub fn count',
  broken: ['values.iter().sum()', 'values.iter().sum::<i32>() + 1'],
  weakened: [/, 3\)/, ', 4)'],
};

/**
 * What makes a cell's suite run as its users run it: a src/ layout is installed (editable) or on
 * pytest's `pythonpath`, here the latter; cargo's build output and lockfile are ignored.
 */
function runnable(layout: Layout): Record<string, string> {
  if (layout.product.endsWith('.rs'))
    return { '.gitignore': 'target/\nCargo.lock\n', ...layout.base };
  if (layout.product.startsWith('src/'))
    return { 'pytest.ini': '[pytest]\npythonpath = src\n', ...layout.base };
  return layout.base;
}

/** node --test runs the JS cells: the ones with no test script get it (the cell is unchanged). */
function withNodeTest(base: Record<string, string>): Record<string, string> {
  const manifest = JSON.parse(base['package.json']!) as Record<string, unknown>;
  manifest.scripts ??= { test: 'node --test' };
  return { ...base, 'package.json': `${JSON.stringify(manifest)}\n` };
}

async function bothWays(layout: Layout, change: Language, base = runnable(layout)): Promise<void> {
  const code = base[layout.product]!;
  const honest = code + change.addition(code);
  const [from, to] = change.broken;
  if (!honest.includes(from)) throw new Error(`${layout.name}: no ${from} to break`);
  await approvedThenRefused({
    base,
    honest: { [layout.product]: honest },
    tactic: {
      [layout.product]: honest.replace(from, to),
      [layout.test]: base[layout.test]!.replace(...change.weakened),
    },
    criterion: 'count(values) returns how many values there are',
    evidence: [{ criterion: 'AC-001', file: layout.product, snippet: change.cited }],
    taken: { taken_from_player: [layout.product] },
    refusal: /base test \S*total\S* passed at the base but failed in the trusted run/,
  });
}

/**
 * Cells another MCP test already runs both ways with the same runner, on the same layout
 * (code-under-test.test.ts: the no-manifest pytest and node --test layouts;
 * code-under-test-monorepo.test.ts: the monorepo subfolder).
 */
const COVERED_ELSEWHERE = new Set([
  'no manifest: pytest.ini and an app package',
  'namespace package (no __init__.py), setup.cfg [tool:pytest]',
  'monorepo subfolder with its own pytest config',
  'no manifest fields: code in app/',
  'no manifest fields: CommonJS in server/, required without extension',
]);
const notCovered = (layout: Layout) => !COVERED_ELSEWHERE.has(layout.name);
const PYTEST_CELLS = PYTHON.filter(notCovered);
const NODE_TEST_CELLS = JAVASCRIPT.filter(
  (layout) => notCovered(layout) && /node:test/.test(layout.base[layout.test]!),
);

describe('the layout table through MCP, pytest', () => {
  it.each(PYTEST_CELLS.map((layout) => [layout.name, layout] as const))(
    '%s: honest approved, tactic refused',
    (_name, layout) => bothWays(layout, PYTHON_CHANGE),
    120_000,
  );
});

describe('the layout table through MCP, node --test', () => {
  it.each(NODE_TEST_CELLS.map((layout) => [layout.name, layout] as const))(
    '%s: honest approved, tactic refused',
    (_name, layout) => bothWays(layout, JS_CHANGE, withNodeTest(layout.base)),
    120_000,
  );
});

describe.skipIf(!hasCargo)(
  `the layout table through MCP, cargo${hasCargo ? '' : ' — skipped: no cargo'}`,
  () => {
    it.each(RUST.map((layout) => [layout.name, layout] as const))(
      '%s: honest approved, tactic refused',
      (_name, layout) => bothWays(layout, RUST_CHANGE),
      240_000,
    );
  },
);
