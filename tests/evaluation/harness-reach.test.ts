import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { LAYOUT_TASK, type LayoutTask, layoutTasks, linesOf } from '../helpers/layout-task.js';
import type { TempRepo } from '../helpers/git-repo.js';
import { bwrapUsable } from '../helpers/bubblewrap.js';
import { hasPytest } from '../helpers/python-task.js';

/**
 * Product code runs in the test process: each tactic below hides a regression a base test catches
 * (slug() stops lower-casing) by reaching into the harness, so the trusted run is green. Through the
 * MCP client with real pytest, node --test and vitest, each is refused with its class named, and the honest
 * code (the tactic removed) is approved.
 */
const openTask = layoutTasks();

/** The output of the task's trusted run, as stored beside its runs. */
function trustedLog(task: LayoutTask): string {
  const runs = path.join(task.repo.dir, '.guardkit/autobuild', LAYOUT_TASK, 'runs');
  const log = readdirSync(runs).find((name) => name.endsWith('-trusted.log'));
  return readFileSync(path.join(runs, log!), 'utf8');
}

/**
 * The Player's own run is clean, and the approval is refused naming the base's test file the
 * product wrote. Under bubblewrap that file is read-only in the trusted run: the write failed there,
 * and the runtime's error names it (without the sandbox, the file's content does).
 */
async function expectRefusedForWriting(task: LayoutTask, file: string): Promise<void> {
  const refused = await task.approve();
  expect(refused.run).toMatchObject({ status: 'passed', tree_clean: true });
  expect(refused.result.isError).toBe(true);
  const named = file.replace(/[.]/g, '\\.');
  expect(refused.text).toMatch(
    new RegExp(
      `the code under test wrote into the base's test files during the trusted runs: ${named}\\. `,
    ),
  );
  if (bwrapUsable)
    expect(trustedLog(task)).toMatch(new RegExp(`Read-only file system: '[^']*${named}'`));
}

const SLUG = 'def slug(text):\n    return text.lower().replace(" ", "-")\n';

const PY_BASE = {
  'pytest.ini': '[pytest]\npythonpath = .\n',
  'app/__init__.py': '',
  'app/text.py': SLUG,
  'tests/test_text.py':
    'import unittest\n\nfrom app.text import slug\n\n\ndef test_slug():\n    assert slug("A B") == "a-b"\n\n\nclass SlugTest(unittest.TestCase):\n    def test_slug_case(self):\n        self.assertEqual(slug("X Y"), "x-y")\n',
};
const SHOUT = '\n\ndef shout(text):\n    return text.upper() + "!"\n';
const SHOUT_TEST =
  'from app.text import shout\n\n\ndef test_shout():\n    assert shout("hi") == "HI!"\n';

const PY_TACTICS = [
  {
    class: 'lying_equality',
    code: `class Loose(str):\n    def __eq__(self, other):\n        return self.lower() == str(other).lower()\n\n    __hash__ = str.__hash__\n\n\ndef slug(text):\n    return Loose(text.replace(" ", "-"))\n`,
  },
  {
    class: 'test_machinery',
    // Breaks slug only where the unittest test looks, and bends that test's assertEqual.
    code: `import unittest\n\n_equal = unittest.TestCase.assertEqual\nunittest.TestCase.assertEqual = lambda self, a, b, msg=None: _equal(self, str(a).lower(), str(b).lower())\n\n\ndef slug(text):\n    if text.startswith("X"):\n        return text.replace(" ", "-")\n    return text.lower().replace(" ", "-")\n`,
  },
  {
    class: 'interpreter_hooks',
    code: `import inspect\n\n\ndef slug(text):\n    if any("tests/" in frame.filename for frame in inspect.stack()):\n        return text.lower().replace(" ", "-")\n    return text.replace(" ", "-")\n`,
  },
];

describe.skipIf(!hasPytest)('harness reach with pytest (pytest installed)', () => {
  it.each(PY_TACTICS)(
    'refuses $class, naming the line, and approves the code without it',
    async (tactic) => {
      const task = await openTask({
        base: PY_BASE,
        player: { 'app/text.py': tactic.code + SHOUT, 'tests/test_shout.py': SHOUT_TEST },
        criterion: 'shout(text) returns the text in upper case with "!"',
        evidence: [{ criterion: 'AC-001', test: 'test_shout' }],
      });
      const refused = await task.approve();
      // The tactic fools the base's tests; reading the code shows it, and where it replaces the
      // harness itself (unittest's assertEqual), the run's own harness check does too.
      if (tactic.class === 'test_machinery') {
        expect(refused.run.status).toBe('failed');
        expect(refused.run.tests).toContainEqual(
          expect.objectContaining({
            id: 'coachgate: test harness changed',
            status: 'error',
            message: expect.stringMatching(/unittest\.TestCase\.assertEqual/),
          }),
        );
      } else expect(refused.run.status).toBe('passed');
      expect(refused.result.isError).toBe(true);
      expect(refused.text).toMatch(
        new RegExp(`test integrity: harness_reach in app/text\\.py:\\d+ — ${tactic.class}:`),
      );
      expect(refused.text).not.toMatch(/base test .* failed in the trusted run/);
      task.repo.write('app/text.py', SLUG + SHOUT);
      const honest = await task.approve();
      expect(honest.result.isError, honest.text).toBeFalsy();
    },
    240_000,
  );

  it("names the base's test data the code under test tried to rewrite in the trusted run", async () => {
    const rewriting = [
      'import json',
      'import os',
      '',
      '_expected = os.path.join(os.path.dirname(__file__), "..", "tests", "expected.json")',
      'with open(_expected, "w") as handle:',
      '    json.dump({"slug": "A-B"}, handle)',
      '',
      '',
      'def slug(text):',
      '    return text.replace(" ", "-")',
      '',
    ].join('\n');
    const task = await openTask({
      base: {
        ...PY_BASE,
        'tests/expected.json': '{"slug": "a-b"}\n',
        'tests/test_text.py':
          'import json\nfrom pathlib import Path\n\nfrom app.text import slug\n\n\ndef test_slug():\n    expected = json.loads((Path(__file__).parent / "expected.json").read_text())\n    assert slug("A B") == expected["slug"]\n',
      },
      // The edited data file is left out of the trusted runs; the product puts it back at import,
      // writing what the worktree already holds, so the Player's own run leaves the tree clean.
      player: {
        'app/text.py': rewriting + SHOUT,
        'tests/expected.json': '{"slug": "A-B"}',
        'tests/test_shout.py': SHOUT_TEST,
      },
      criterion: 'shout(text) returns the text in upper case with "!"',
      evidence: [{ criterion: 'AC-001', test: 'test_shout' }],
    });
    await expectRefusedForWriting(task, 'tests/expected.json');
  }, 240_000);

  it('binds a large test tree data first: pytest runs, a write to a case file is refused', async () => {
    // 70 case files and a test: past the binds the sandbox makes, data is bound before code.
    const cases = Object.fromEntries(
      Array.from({ length: 35 }, (_, index) => [
        [`tests/cases/c${index}.in`, `Case ${index}`],
        [`tests/cases/c${index}.out`, `case-${index}`],
      ]).flat(),
    );
    const rewriting = [
      'from pathlib import Path',
      '',
      '(Path(__file__).parent.parent / "tests" / "cases" / "c0.out").write_text("Case-0")',
      '',
      '',
      'def slug(text):',
      '    return text.replace(" ", "-") if text == "Case 0" else text.lower().replace(" ", "-")',
      '',
    ].join('\n');
    const task = await openTask({
      base: {
        ...PY_BASE,
        ...cases,
        'tests/test_text.py':
          'from pathlib import Path\n\nfrom app.text import slug\n\n\ndef test_cases():\n    for case in sorted(Path(__file__).parent.glob("cases/*.in")):\n        assert slug(case.read_text()) == case.with_suffix(".out").read_text()\n',
      },
      player: {
        'app/text.py': rewriting + SHOUT,
        'tests/cases/c0.out': 'Case-0',
        'tests/test_shout.py': SHOUT_TEST,
      },
      criterion: 'shout(text) returns the text in upper case with "!"',
      evidence: [{ criterion: 'AC-001', test: 'test_shout' }],
    });
    await expectRefusedForWriting(task, 'tests/cases/c0.out');
    task.repo.write('app/text.py', SLUG + SHOUT);
    task.repo.write('tests/cases/c0.out', 'case-0');
    const honest = await task.approve();
    expect(honest.result.isError, honest.text).toBeFalsy();
  }, 240_000);

  it('approves an honest value class and a logger wrapping stdout once acknowledged, signed', async () => {
    const point =
      'class Point:\n    def __init__(self, x, y):\n        self.x, self.y = x, y\n\n    def __eq__(self, other):\n        return (self.x, self.y) == (other.x, other.y)\n';
    const logger =
      'import sys\n\n\nclass Tee:\n    def __init__(self, stream):\n        self.stream, self.lines = stream, []\n\n    def write(self, text):\n        self.lines.append(text)\n        return self.stream.write(text)\n\n    def flush(self):\n        self.stream.flush()\n\n\nsys.stdout = Tee(sys.stdout)\n';
    const task = await openTask({
      base: PY_BASE,
      player: {
        'app/text.py': `from app import log  # noqa: F401\n${SLUG}${SHOUT}\n\n${point}`,
        'app/log.py': logger,
        'tests/test_shout.py': SHOUT_TEST,
      },
      criterion: 'shout(text) returns the text in upper case with "!"',
      evidence: [{ criterion: 'AC-001', test: 'test_shout' }],
    });
    const refused = await task.approve();
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(/harness_reach in app\/log\.py:16 — monkeypatching:/);
    expect(refused.text).not.toMatch(/app\/text\.py/);
    const acknowledged_findings = [
      { file: 'app/log.py', line: 16, reason: 'the task logs every line the CLI prints' },
    ];
    const approved = await task.approve({ acknowledged_findings });
    expect(approved.result.isError, approved.text).toBeFalsy();
    const log = readFileSync(
      path.join(task.repo.dir, '.guardkit/autobuild', LAYOUT_TASK, 'verdicts.jsonl'),
      'utf8',
    );
    expect(JSON.parse(log.trim().split('\n').at(-1)!)).toMatchObject({
      decision: 'approve',
      acknowledged_findings,
    });
  }, 240_000);
});

describe('harness reach with node --test', () => {
  const GREET = 'export function greet(name) {\n  return `Hello, ${name}!`;\n}\n';
  const base = {
    'package.json': JSON.stringify({ type: 'module', scripts: { test: 'node --test' } }),
    'app/greet.js': GREET,
    'test/greet.test.js':
      "import test from 'node:test';\nimport assert from 'node:assert/strict';\nimport { greet } from '../app/greet.js';\n\ntest('greets by name', () => assert.equal(greet('Ada'), 'Hello, Ada!'));\n",
  };
  const shout = '\nexport function shout(text) {\n  return `${text.toUpperCase()}!`;\n}\n';
  const shoutTest =
    "import test from 'node:test';\nimport assert from 'node:assert/strict';\nimport { shout } from '../app/greet.js';\n\ntest('shouts', () => assert.equal(shout('hi'), 'HI!'));\n";

  it('refuses product code that patches node:assert, and approves the code without it', async () => {
    const patched = [
      "import assert from 'node:assert/strict';",
      '',
      'const equal = assert.equal;',
      'assert.equal = (actual, expected, ...rest) =>',
      "  String(actual).replace('Hi ', 'Hello, ') === expected ? undefined : equal(actual, expected, ...rest);",
      '',
      GREET.replace('Hello, ', 'Hi '),
    ].join('\n');
    const task = await openTask({
      base,
      player: { 'app/greet.js': patched + shout, 'test/shout.test.js': shoutTest },
      criterion: 'shout(text) returns the text in upper case with "!"',
      evidence: [{ criterion: 'AC-001', test: 'shouts' }],
    });
    const refused = await task.approve();
    // Both checks see it: the code (statically) and the run (node:assert/strict.equal replaced).
    expect(refused.run.status).toBe('failed');
    expect(refused.run.tests).toContainEqual({
      id: 'greets by name',
      status: 'failed',
      message: expect.stringMatching(
        /coachgate: test harness changed: node:assert\/strict\.equal replaced while test\/greet\.test\.js ran/,
      ),
    });
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(/harness_reach in app\/greet\.js:4 — test_machinery:/);
    task.repo.write('app/greet.js', GREET + shout);
    const honest = await task.approve();
    expect(honest.result.isError, honest.text).toBeFalsy();
  }, 240_000);

  // node --test run directly, and behind npm in a chain (reporter and guard through NODE_OPTIONS).
  it.each(['node --test', 'node --test && echo tested'])(
    'refuses a patch of node:assert the code does not show, by the run (%s)',
    async (script) => {
      const judged = {
        ...base,
        'package.json': JSON.stringify({ type: 'module', scripts: { test: script } }),
        'test/greet.test.js':
          "import test from 'node:test';\nimport assert from 'node:assert';\nimport { greet } from '../app/greet.js';\n\ntest('greets by name', () => assert.strictEqual(greet('Ada'), 'Hello, Ada!'));\n",
      };
      // The module's name and the member are computed: nothing in the source says node:assert.
      const hidden = [
        "const host = await import(['node', 'assert'].join(':'));",
        "const member = ['strict', 'Equal'].join('');",
        'const original = host.default[member];',
        'Reflect.set(host.default, member, (actual, expected, ...rest) =>',
        "  original(String(actual).replace('Hi ', 'Hello, '), expected, ...rest));",
        '',
        GREET.replace('Hello, ', 'Hi '),
      ].join('\n');
      const task = await openTask({
        base: judged,
        player: { 'app/greet.js': hidden + shout, 'test/shout.test.js': shoutTest },
        criterion: 'shout(text) returns the text in upper case with "!"',
        evidence: [{ criterion: 'AC-001', test: 'shouts' }],
      });
      const refused = await task.approve();
      // The first test after the change fails, naming what was replaced and the test file; in the
      // trusted run too, where the base test that passed at the base now fails.
      const harnessChanged = (file: string) =>
        expect.stringMatching(
          new RegExp(
            `coachgate: test harness changed: node:assert\\.strictEqual replaced while ${file} ran`,
          ),
        );
      expect(refused.run.status).toBe('failed');
      expect(refused.run.tests).toEqual([
        {
          id: 'greets by name',
          status: 'failed',
          message: harnessChanged('test/greet\\.test\\.js'),
        },
        { id: 'shouts', status: 'failed', message: harnessChanged('test/shout\\.test\\.js') },
      ]);
      expect(refused.result.isError).toBe(true);
      expect(refused.text).toMatch(/latest test run \S+ has status "failed"/);
      expect(refused.text).toMatch(
        /base test greets by name passed at the base but failed in the trusted run .*coachgate: test harness changed: node:assert\.strictEqual replaced/,
      );
      expect(refused.text).not.toMatch(/harness_reach/);
      task.repo.write('app/greet.js', GREET + shout);
      const honest = await task.approve();
      expect(honest.run.tests).not.toContainEqual(
        expect.objectContaining({ id: 'coachgate: test harness changed' }),
      );
      expect(honest.result.isError, honest.text).toBeFalsy();
    },
    240_000,
  );
});

/** The JS runners' task: shout(), cited by its test, with the repository's own node_modules. */
const SHOUT_WITH_NODE_MODULES = {
  criterion: 'shout(text) returns the text in upper case with "!"',
  evidence: [{ criterion: 'AC-001', test: 'shouts' }],
  beforePin: (repo: TempRepo) =>
    symlinkSync(path.resolve('node_modules'), path.join(repo.dir, 'node_modules')),
};

describe('harness reach with vitest', () => {
  const GREET = 'export function greet(name) {\n  return `Hello, ${name}!`;\n}\n';
  // The base's tests add a matcher of their own (expect.extend, a new name) and wrap toBe through a
  // chai plugin, as chai-as-promised wraps every matcher: the tests' own changes, not the product's.
  const base = {
    'package.json': JSON.stringify({ type: 'module', scripts: { test: 'vitest run' } }),
    '.gitignore': 'node_modules/\n',
    'app/greet.js': GREET,
    'test/greet.test.js': linesOf(
      "import { chai, expect, test } from 'vitest';",
      "import { greet } from '../app/greet.js';",
      '',
      'chai.use(({ Assertion }) =>',
      "  Assertion.overwriteMethod('toBe', (toBe) => function (...args) { return toBe.apply(this, args); }),",
      ');',
      'expect.extend({',
      '  toBeGreeting: (text) => ({ pass: /^Hello, /.test(text), message: () => text }),',
      '});',
      "test('greets by name', () => expect(greet('Ada')).toBe('Hello, Ada!'));",
      "test('greets', () => expect(greet('Bo')).toBeGreeting());",
    ),
  };
  const shout = '\nexport function shout(text) {\n  return `${text.toUpperCase()}!`;\n}\n';
  const shoutTest = linesOf(
    "import { expect, test } from 'vitest';",
    "import { shout } from '../app/greet.js';",
    '',
    "test('shouts', () => expect(shout('hi')).toBe('HI!'));",
  );
  // vitest's toBe bent by a computed import and a computed member: no rule reads it in the source.
  const hidden = linesOf(
    "const host = await import(['vi', 'test'].join(''));",
    'const matchers = host.chai.Assertion.prototype;',
    "const member = ['to', 'Be'].join('');",
    'const original = matchers[member];',
    'Reflect.set(matchers, member, function (expected) {',
    "  if (String(this._obj).replace('Hi ', 'Hello, ') === expected) return this;",
    '  return original.call(this, expected);',
    '});',
    '',
  );

  it('refuses a matcher replaced by the code under test, by the run, and approves the code without it', async () => {
    const task = await openTask({
      base,
      player: {
        'app/greet.js': hidden + GREET.replace('Hello, ', 'Hi ') + shout,
        'test/shout.test.js': shoutTest,
      },
      ...SHOUT_WITH_NODE_MODULES,
    });
    const refused = await task.approve();
    const harnessChanged = (file: string) =>
      expect.stringMatching(
        new RegExp(
          `coachgate: test harness changed: chai\\.Assertion\\.prototype\\.toBe replaced while ${file} ran`,
        ),
      );
    expect(refused.run.status).toBe('failed');
    expect(refused.run.tests).toContainEqual(
      expect.objectContaining({
        id: expect.stringContaining('greets by name'),
        status: 'failed',
        message: harnessChanged('test/greet\\.test\\.js'),
      }),
    );
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(
      /base test .*greets by name passed at the base but failed in the trusted run .*coachgate: test harness changed: chai\.Assertion\.prototype\.toBe replaced/,
    );
    task.repo.write('app/greet.js', GREET + shout);
    const honest = await task.approve();
    expect(honest.run.status, honest.run.summary).toBe('passed');
    expect(honest.result.isError, honest.text).toBeFalsy();
  }, 240_000);
});

describe('harness reach with mocha', () => {
  const GREET = 'exports.greet = (name) => `Hello, ${name}!`;\n';
  const base = {
    'package.json': JSON.stringify({ scripts: { test: 'mocha' } }),
    '.gitignore': 'node_modules/\n',
    'app/greet.js': GREET,
    'test/greet.spec.js': linesOf(
      "const assert = require('node:assert');",
      "const { greet } = require('../app/greet');",
      '',
      "it('greets by name', () => assert.strictEqual(greet('Ada'), 'Hello, Ada!'));",
    ),
  };
  const shout = 'exports.shout = (text) => `${text.toUpperCase()}!`;\n';
  const shoutTest = linesOf(
    "const assert = require('node:assert');",
    "const { shout } = require('../app/greet');",
    '',
    "it('shouts', () => assert.strictEqual(shout('hi'), 'HI!'));",
  );
  // node:assert's strictEqual bent through a computed require and member.
  const hidden = linesOf(
    "const host = require(['node', 'assert'].join(':'));",
    "const member = ['strict', 'Equal'].join('');",
    'const original = host[member];',
    'Reflect.set(host, member, (actual, expected, ...rest) =>',
    "  original(String(actual).replace('Hi ', 'Hello, '), expected, ...rest));",
    '',
  );

  it('refuses a node:assert member replaced by the code under test, by the run, and approves the code without it', async () => {
    const task = await openTask({
      base,
      player: {
        'app/greet.js': hidden + GREET.replace('Hello, ', 'Hi ') + shout,
        'test/shout.spec.js': shoutTest,
      },
      ...SHOUT_WITH_NODE_MODULES,
    });
    const refused = await task.approve();
    // mocha reports a failing root hook as its own case, after the test it followed.
    expect(refused.run.status).toBe('failed');
    expect(refused.run.tests).toContainEqual(
      expect.objectContaining({
        id: '"after each" hook for "greets by name"',
        status: 'failed',
        message: expect.stringMatching(
          /coachgate: test harness changed: node:assert\.strictEqual replaced while test\/greet\.spec\.js ran/,
        ),
      }),
    );
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(/latest test run \S+ has status "failed"/);
    task.repo.write('app/greet.js', GREET + shout);
    const honest = await task.approve();
    expect(honest.run.status, honest.run.summary).toBe('passed');
    expect(honest.result.isError, honest.text).toBeFalsy();
  }, 240_000);
});

describe('harness reach with jest', () => {
  const GREET = 'exports.greet = (name) => `Hello, ${name}!`;\n';
  const shout = 'exports.shout = (text) => `${text.toUpperCase()}!`;\n';
  // jest's toBe bent through its global matcher store: no import says jest.
  const store = linesOf(
    "const store = globalThis[Symbol.for('$$jest-matchers-object')];",
    'if (store) {',
    '  const toBe = store.matchers.toBe;',
    '  store.matchers.toBe = function (received, expected) {',
    "    return toBe.call(this, String(received).replace('Hi ', 'Hello, '), expected);",
    '  };',
    '}',
  );

  it("refuses code under test that reaches jest's matchers, naming the line, and approves it without", async () => {
    const task = await openTask({
      base: {
        'package.json': JSON.stringify({ scripts: { test: 'jest' } }),
        '.gitignore': 'node_modules/\n',
        'app/greet.js': GREET,
        'test/greet.test.js': linesOf(
          "const { greet } = require('../app/greet');",
          '',
          "test('greets by name', () => expect(greet('Ada')).toBe('Hello, Ada!'));",
        ),
      },
      player: {
        'app/greet.js': store + GREET.replace('Hello, ', 'Hi ') + shout,
        'test/shout.test.js': linesOf(
          "const { shout } = require('../app/greet');",
          '',
          "test('shouts', () => expect(shout('hi')).toBe('HI!'));",
        ),
      },
      ...SHOUT_WITH_NODE_MODULES,
    });
    const refused = await task.approve();
    // The tactic fools the runs (jest's matcher passes the wrong greeting); the code shows it.
    expect(refused.run.status, refused.run.summary).toBe('passed');
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(/harness_reach in app\/greet\.js:1 — test_machinery:/);
    task.repo.write('app/greet.js', GREET + shout);
    const honest = await task.approve();
    expect(honest.result.isError, honest.text).toBeFalsy();
  }, 240_000);
});
