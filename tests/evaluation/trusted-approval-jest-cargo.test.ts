import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import { JEST_VERSION, installedPackage } from '../helpers/runners.js';
import { runs } from '../helpers/toolchains.js';

/**
 * Tactics that need jest or cargo, each refused by the trusted runs through the MCP client in a real repo:
 * a jest `pretest` script that rewrites an assertion and a `posttest` that puts it back, a jest base test
 * reduced to `expect(true)` or `test.each([])`, and Rust `#[cfg(any())]` over a `#[test]`.
 */
const TASK = 'TASK-010';
let repo: TempRepo;
let client: Client;
let close: () => Promise<void>;
afterEach(async () => {
  await close?.();
  repo?.remove();
});

const taskFile = (criterion: string) =>
  `---\nid: ${TASK}\ntitle: T\n---\n## Acceptance Criteria\n- [ ] AC-001: ${criterion}\n`;

/** The base committed on main, the Player's files written on the task branch, turn 1 reported. */
async function project(
  base: Record<string, string>,
  player: Record<string, string>,
  prepare: (dir: string) => void = () => {},
) {
  repo = makeRepo();
  for (const [file, content] of Object.entries(base)) repo.write(file, content);
  prepare(repo.dir);
  repo.commit('base');
  repo.git('checkout', '-q', '-b', `autobuild/${TASK}`);
  for (const [file, content] of Object.entries(player)) repo.write(file, content);
  ({ client, close } = await connect({ roots: [repo.dir] }));
  await call('record_player_report', {
    turn: 1,
    report: {
      files_modified: Object.keys(player),
      tests_passed: true,
      requirements_addressed: ['AC-001'],
    },
  });
}

const call = (name: string, args: Record<string, unknown>) =>
  callTool(client, name, { worktree: repo.dir, task_id: TASK, ...args });

async function approve(evidence: Record<string, unknown>[]) {
  const run = dataOf(await call('run_independent_tests', { timeout_s: 120 }));
  const result = await call('record_verdict', {
    turn: 1,
    decision: 'approve',
    rationale: 'done',
    evidence,
  });
  return { run, text: textOf(result), isError: result.isError };
}

const GREET =
  'function greet(name) {\n  return `Hello, ${name}!`;\n}\nmodule.exports = { greet };\n';
const BROKEN_GREET = GREET.replace('Hello, ', 'Hi ');
const JEST_TEST =
  "const { greet } = require('../src/lib');\n\ntest('greets by name', () => {\n  expect(greet('Ada')).toBe('Hello, Ada!');\n});\n";
const JEST_BASE = {
  'package.json': JSON.stringify({ name: 'greet', scripts: { test: 'jest' } }, null, 2),
  '.gitignore': 'node_modules/\n',
  'src/lib.js': GREET,
  'test/lib.test.js': JEST_TEST,
  [`.guardkit/tasks/backlog/${TASK}.md`]: taskFile('greet keeps working'),
};
const linkJest = (dir: string) =>
  execFileSync('ln', [
    '-s',
    path.join(installedPackage('jest', JEST_VERSION), 'node_modules'),
    path.join(dir, 'node_modules'),
  ]);
const JEST_EVIDENCE = [{ criterion: 'AC-001', file: 'src/lib.js', snippet: 'return' }];
const JEST_REFUSED =
  /base test test\/lib\.test\.js > greets by name passed at the base but failed in the trusted run/;

describe('trusted evaluation with jest', () => {
  it('refuses a pretest script that rewrites an assertion and a posttest that restores it', async () => {
    const rewrite = (from: string, to: string) =>
      `node -e "const f=require('fs'),p='test/lib.test.js';f.writeFileSync(p,f.readFileSync(p,'utf8').replace('${from}','${to}'))"`;
    await project(
      JEST_BASE,
      {
        'src/lib.js': BROKEN_GREET,
        'package.json': JSON.stringify(
          {
            name: 'greet',
            scripts: {
              pretest: rewrite('Hello, Ada!', 'Hi Ada!'),
              test: 'jest',
              posttest: rewrite('Hi Ada!', 'Hello, Ada!'),
            },
          },
          null,
          2,
        ),
      },
      linkJest,
    );
    const { run, text, isError } = await approve(JEST_EVIDENCE);
    // The scripts fooled the Player's own run and left the tree as it was.
    expect(run).toMatchObject({ status: 'passed', tree_clean: true });
    expect(isError).toBe(true);
    expect(text).toMatch(JEST_REFUSED);
  }, 180_000);

  it.each([
    [
      'expect(true).toBe(true)',
      JEST_TEST.replace("expect(greet('Ada')).toBe('Hello, Ada!');", 'expect(true).toBe(true);'),
    ],
    [
      "test.each([])('same title')",
      JEST_TEST.replace(
        "test('greets by name', () => {",
        "test.each([])('greets by name', () => {",
      ),
    ],
  ])(
    'refuses a jest base test weakened with %s',
    async (_tactic, body) => {
      await project(JEST_BASE, { 'src/lib.js': BROKEN_GREET, 'test/lib.test.js': body }, linkJest);
      const { text, isError } = await approve(JEST_EVIDENCE);
      expect(isError).toBe(true);
      expect(text).toMatch(JEST_REFUSED);
    },
    180_000,
  );
});

describe('collection check with jest', () => {
  it("refuses the Player's new test file that jest never collects, not a helper beside it", async () => {
    await project(
      JEST_BASE,
      {
        // jest's testMatch wants `.test.js`; `-test.js` is never collected.
        'test/shout-test.js': "test('shouts', () => expect(1).toBe(1));\n",
        'test/helpers.js': 'module.exports = {};\n',
      },
      linkJest,
    );
    const { text, isError } = await approve(JEST_EVIDENCE);
    expect(isError).toBe(true);
    expect(text).toMatch(
      /test file test\/shout-test\.js was added but contributes no test to the candidate run/,
    );
    expect(text).not.toMatch(/test\/helpers\.js was added/);
  }, 180_000);
});

const hasCargo = runs('cargo', ['--version']);

const CRATE_LIB = (add: string, marker = '') =>
  [
    `pub fn add(a: i64, b: i64) -> i64 { ${add} }`,
    '',
    '#[cfg(test)]',
    'mod tests {',
    '    use super::*;',
    `${marker}    #[test]`,
    '    fn adds() { assert_eq!(add(2, 3), 5); }',
    '    #[test]',
    '    fn adds_zero() { assert_eq!(add(0, 0), 0); }',
    '}',
    '',
  ].join('\n');

/** The same crate with its code and in-source tests inside an inline module `ops`. */
const NESTED_CRATE_LIB = (add: string) =>
  `pub mod ops {\n${CRATE_LIB(add).replace(/^(?=.)/gm, '    ')}}\n\npub use ops::add;\n`;

// Skipped only when the toolchain is absent, and the title says so.
describe.skipIf(!hasCargo)(
  `trusted evaluation with cargo (offline crate, no dependencies)${hasCargo ? '' : ' — skipped: cargo not installed'}`,
  () => {
    // In-source tests are the base's in the trusted run: the Player's copy of src/lib.rs is taken
    // for its code, with the base's #[cfg(test)] items put back.
    it.each([
      [
        '#[cfg(any())] over a #[test]',
        CRATE_LIB('a + b'),
        CRATE_LIB('a - b', '    #[cfg(any())]\n'),
      ],
      [
        'an in-source test body weakened to assert!(true)',
        CRATE_LIB('a + b'),
        CRATE_LIB('a - b').replace('assert_eq!(add(2, 3), 5)', 'assert!(true)'),
      ],
      [
        'a test module nested in an inline module weakened to assert!(true)',
        NESTED_CRATE_LIB('a + b'),
        NESTED_CRATE_LIB('a - b').replace('assert_eq!(add(2, 3), 5)', 'assert!(true)'),
      ],
    ])(
      'refuses %s in the code under test',
      async (_tactic, base, lib) => {
        await project(
          {
            'Cargo.toml':
              '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
            '.gitignore': 'target/\n',
            'src/lib.rs': base,
            [`.guardkit/tasks/backlog/${TASK}.md`]: taskFile('add keeps working'),
          },
          { 'src/lib.rs': lib },
          (dir) => execFileSync('cargo', ['generate-lockfile', '--offline'], { cwd: dir }),
        );
        const { run, text, isError } = await approve([
          { criterion: 'AC-001', file: 'src/lib.rs', snippet: 'pub fn add' },
        ]);
        // The weakened test passes (or no longer runs) in the Player's run; the summary says why not.
        expect(run.status, `${run.failure_class}: ${run.summary}`).toBe('passed');
        expect(isError).toBe(true);
        expect(text).toMatch(
          /base test (?:ops::)?tests::adds passed at the base but failed in the trusted run/,
        );
      },
      240_000,
    );
  },
);
