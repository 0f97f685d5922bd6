import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasPytest } from '../helpers/python-task.js';
import { approvedThenRefused, layoutTasks } from '../helpers/layout-task.js';

/**
 * Code under test on layouts no manifest describes, through the MCP client with real pytest and
 * node --test: what the base's tests import is the Player's code. On each layout the honest change
 * is approved and "break the code, weaken the base test to match" is refused.
 */
const openTask = layoutTasks();

const SLUG = 'def slug(text):\n    return text.lower().replace(" ", "-")\n';
const SHOUT = '\n\ndef shout(text):\n    return text.upper() + "!"\n';
const pythonTests = (module: string) => ({
  base: `from ${module} import slug\n\n\ndef test_slug():\n    assert slug("A B") == "a-b"\n`,
  weakened: `from ${module} import slug\n\n\ndef test_slug():\n    assert slug("A B") == "A-B"\n`,
  shout: `from ${module} import shout\n\n\ndef test_shout():\n    assert shout("hi") == "HI!"\n`,
});

const PYTHON_LAYOUTS: {
  name: string;
  code: string;
  module: string;
  base: Record<string, string>;
}[] = [
  {
    name: 'an app package with only pytest.ini and requirements.txt',
    code: 'app/text.py',
    module: 'app.text',
    base: {
      'pytest.ini': '[pytest]\ntestpaths = tests\npythonpath = .\n',
      'requirements.txt': 'requests\n',
      'app/__init__.py': '',
    },
  },
  {
    name: 'a src/ package that tox.ini puts on the path',
    code: 'src/shop/text.py',
    module: 'shop.text',
    base: {
      'tox.ini': '[tox]\nenvlist = py3\n\n[pytest]\npythonpath = src\n',
      'src/shop/__init__.py': '',
    },
  },
  {
    name: 'a namespace package (no __init__.py) beside tests with their own __init__.py',
    code: 'service/text.py',
    module: 'service.text',
    base: { 'tests/__init__.py': '', 'setup.cfg': '[tool:pytest]\ntestpaths = tests\n' },
  },
];

describe.skipIf(!hasPytest)('code under test with pytest, no manifest (pytest installed)', () => {
  it.each(PYTHON_LAYOUTS)(
    '$name: the honest fix is approved, a broken base behaviour is refused',
    async (layout) => {
      const tests = pythonTests(layout.module);
      const base = { ...layout.base, [layout.code]: SLUG, 'tests/test_text.py': tests.base };
      await approvedThenRefused({
        base,
        honest: { [layout.code]: SLUG + SHOUT, 'tests/test_shout.py': tests.shout },
        tactic: {
          [layout.code]: SLUG.replace('.lower()', '') + SHOUT,
          'tests/test_text.py': tests.weakened,
        },
        evidence: [{ criterion: 'AC-001', test: 'test_shout' }],
        taken: {
          taken_from_player: [layout.code],
          taken_because: [{ file: layout.code, reason: 'imported by tests/test_text.py' }],
        },
        refusal:
          /base test tests\/test_text\.py::test_slug passed at the base but failed in the trusted run/,
      });
    },
    240_000,
  );

  it('refuses a vacuous evaluation: changed code no test reaches, named with the way out', async () => {
    const base = {
      'pytest.ini': '[pytest]\npythonpath = .\n',
      'app/__init__.py': '',
      'app/text.py': SLUG,
      'tests/test_text.py': pythonTests('app.text').base,
    };
    // The change lives in a module the base's tests never import; the evidence cites the code.
    const player = { 'app/report.py': SLUG.replace('.lower()', '') };
    const evidence = [
      { criterion: 'AC-001', file: 'app/report.py', line: 2, snippet: 'text.replace' },
    ];
    const task = await openTask({
      base,
      player,
      criterion: 'report slugs keep their case',
      evidence,
    });
    const refused = await task.approve();
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(
      /vacuous evaluation: the trusted runs took none of your changed code \(app\/report\.py\).*acknowledged_left_out, e\.g\. \[\{"file": "app\/report\.py"/,
    );
    // Acknowledged as code: the trusted runs take it, and the evaluation is no longer vacuous.
    const acknowledged = await task.approve({
      acknowledged_left_out: [{ file: 'app/report.py', reason: 'the module the task changes' }],
    });
    expect(acknowledged.result.isError, acknowledged.text).toBeFalsy();
    expect(acknowledged.evaluation).toMatchObject({
      taken_by_acknowledgement: ['app/report.py'],
      vacuous: false,
    });
  }, 240_000);
});

describe.skipIf(!hasPytest)('honest changes on a layout the rules know (pytest installed)', () => {
  const base = {
    'pytest.ini': '[pytest]\npythonpath = .\n',
    'app/__init__.py': '',
    'app/text.py': SLUG,
    'tests/test_text.py': pythonTests('app.text').base,
  };
  const criterion = 'shout(text) returns the text in upper case with "!"';

  it("takes a new conftest that only adds a fixture for the Player's new tests", async () => {
    const conftest = 'import pytest\n\n\n@pytest.fixture\ndef word():\n    return "hi"\n';
    const test =
      'from app.text import shout\n\n\ndef test_shout(word):\n    assert shout(word) == "HI!"\n';
    const task = await openTask({
      base,
      player: {
        'app/text.py': SLUG + SHOUT,
        'tests/conftest.py': conftest,
        'tests/test_shout.py': test,
      },
      criterion,
      evidence: [{ criterion: 'AC-001', test: 'test_shout' }],
    });
    const approved = await task.approve();
    expect(approved.result.isError, approved.text).toBeFalsy();
  }, 240_000);

  it('verifies a criterion cited by a line inside a passing test, not by a line of a helper', async () => {
    const test = [
      'from app.text import shout',
      '',
      '',
      'def loud(text):',
      '    return shout(text)',
      '',
      '',
      'def test_shout():',
      '    assert shout("hi") == "HI!"',
      '',
    ].join('\n');
    const task = await openTask({
      base,
      player: { 'app/text.py': SLUG + SHOUT, 'tests/test_shout.py': test },
      criterion: 'unit tests cover shout',
      evidence: [{ criterion: 'AC-001', file: 'tests/test_shout.py', line: 5 }],
    });
    const refused = await task.approve();
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(/tests\/test_shout\.py:5 is not inside a test/);
    const approved = await task.approve({
      evidence: [{ criterion: 'AC-001', file: 'tests/test_shout.py', snippet: 'def test_shout' }],
    });
    expect(approved.result.isError, approved.text).toBeFalsy();
  }, 240_000);

  it('approves a base test the task retires once the Coach acknowledges it, and says it failed', async () => {
    // The task makes slug keep case; the old test of lower-casing goes, acknowledged for AC-001.
    const task = await openTask({
      base,
      player: {
        'app/text.py': SLUG.replace('.lower()', ''),
        'tests/test_text.py':
          'from app.text import slug\n\n\ndef test_slug_keeps_case():\n    assert slug("A B") == "A-B"\n',
      },
      criterion: 'slug keeps the case of the text',
      evidence: [{ criterion: 'AC-001', test: 'test_slug_keeps_case' }],
    });
    const acknowledged_changes = [
      { test: 'tests/test_text.py::test_slug', criterion: 'AC-001', reason: 'slug keeps case now' },
    ];
    const approved = await task.approve({ acknowledged_changes });
    expect(approved.result.isError, approved.text).toBeFalsy();
  }, 240_000);
});

describe.skipIf(!hasPytest)(
  'doctests in product code are base tests (pytest --doctest-modules; pytest installed)',
  () => {
    const documented = (expected: string, body: string) =>
      `def slug(text):\n    """Lower-case, dashes.\n\n    >>> slug("A B")\n    '${expected}'\n    """\n    ${body}\n`;
    const GOOD = 'return text.lower().replace(" ", "-")';
    const base = {
      'pytest.ini': '[pytest]\naddopts = --doctest-modules\npythonpath = .\n',
      'app/__init__.py': '',
      'app/text.py': documented('a-b', GOOD),
      'tests/test_text.py':
        'from app.text import slug\n\n\ndef test_spaces():\n    assert slug("x") == "x"\n',
    };
    const criterion = 'shout(text) returns the text in upper case with "!"';

    it('refuses a weakened doctest example, and approves once the Coach acknowledges it', async () => {
      const broken = documented('A-B', 'return text.replace(" ", "-")');
      const task = await openTask({
        base,
        player: {
          'app/text.py': broken + SHOUT,
          'tests/test_shout.py': pythonTests('app.text').shout,
        },
        criterion,
        evidence: [{ criterion: 'AC-001', test: 'test_shout' }],
      });
      const refused = await task.approve();
      expect(refused.run.status).toBe('passed'); // the weakened example passes on the broken code
      expect(refused.result.isError).toBe(true);
      expect(refused.text).toMatch(
        /test integrity: doctest_changed in app\/text\.py:4 — a doctest example of `slug`/,
      );
      const acknowledged = await task.approve({
        acknowledged_changes: [{ test: 'slug', criterion: 'AC-001', reason: 'slugs keep case' }],
      });
      expect(acknowledged.result.isError, acknowledged.text).toBeFalsy();
    }, 240_000);
  },
);

const GREET = 'function greet(name) {\n  return `Hello, ${name}!`;\n}\n';
const SHOUT_JS = '\nfunction shout(text) {\n  return `${text.toUpperCase()}!`;\n}\n';
/** The module in ESM or CommonJS, and a node:test file loading it the same way. */
const esm = { exports: (names: string) => `\nexport { ${names} };\n` };
const cjs = { exports: (names: string) => `\nmodule.exports = { ${names} };\n` };
const jsTest = (layout: JsLayout, name: string, body: string) =>
  layout.cjs
    ? `const test = require('node:test');\nconst assert = require('node:assert/strict');\nconst { ${name} } = require('${layout.from}');\n\n${body}\n`
    : `import test from 'node:test';\nimport assert from 'node:assert/strict';\nimport { ${name} } from '${layout.from}';\n\n${body}\n`;
const greets = (expected: string) =>
  `test('greets by name', () => assert.equal(greet('Ada'), '${expected}'));`;
const SHOUTS = "test('shouts', () => assert.equal(shout('hi'), 'HI!'));";

interface JsLayout {
  name: string;
  code: string;
  from: string;
  cjs: boolean;
}
const JS_LAYOUTS: JsLayout[] = [
  { name: 'ESM code in app/', code: 'app/greet.js', from: '../app/greet.js', cjs: false },
  {
    name: 'CommonJS code in routes/, required without extension',
    code: 'routes/greet.js',
    from: '../routes/greet',
    cjs: true,
  },
];

describe('code under test with node --test, no manifest fields', () => {
  it.each(JS_LAYOUTS)(
    '$name: the honest fix is approved, a broken base behaviour is refused',
    async (layout) => {
      const style = layout.cjs ? cjs : esm;
      const manifest = JSON.stringify({
        ...(layout.cjs ? {} : { type: 'module' }),
        scripts: { test: 'node --test' },
      });
      const base = {
        'package.json': manifest,
        [layout.code]: GREET + style.exports('greet'),
        'test/greet.test.js': jsTest(layout, 'greet', greets('Hello, Ada!')),
      };
      await approvedThenRefused({
        base,
        honest: {
          [layout.code]: GREET + SHOUT_JS + style.exports('greet, shout'),
          'test/shout.test.js': jsTest(layout, 'shout', SHOUTS),
        },
        tactic: {
          [layout.code]: GREET.replace('Hello, ', 'Hi ') + SHOUT_JS + style.exports('greet, shout'),
          'test/greet.test.js': jsTest(layout, 'greet', greets('Hi Ada!')),
        },
        evidence: [{ criterion: 'AC-001', test: 'shouts' }],
        taken: { taken_from_player: [layout.code] },
        refusal: /base test .*greets by name passed at the base but failed/,
      });
    },
    240_000,
  );
});

describe("the Player's new tests in the trusted setting, node --test (ids name no file)", () => {
  it('refuses a new test that passes only through a setup file the Player added to the command', async () => {
    const greet = 'function greet(name) {\n  return `Hello, ${name}!`;\n}\n';
    const base = {
      'package.json': JSON.stringify({ scripts: { test: 'node --test' } }),
      'routes/greet.js': `${greet}\nmodule.exports = { greet };\n`,
      'test/greet.test.js':
        "const test = require('node:test');\nconst assert = require('node:assert/strict');\nconst lib = require('../routes/greet');\n\ntest('greets by name', () => assert.equal(lib.greet('Ada'), 'Hello, Ada!'));\n",
    };
    // shout() is wrong; a setup file the Player's own command loads replaces it before the tests.
    const player = {
      'routes/greet.js': `${greet}\nfunction shout(text) {\n  return text;\n}\n\nmodule.exports = { greet, shout };\n`,
      'test/setup.js':
        "const lib = require('../routes/greet');\nlib.shout = (text) => `${text.toUpperCase()}!`;\n",
      'package.json': JSON.stringify({
        scripts: { test: 'node --test --require ./test/setup.js' },
      }),
      'test/shout.test.js':
        "const test = require('node:test');\nconst assert = require('node:assert/strict');\nconst lib = require('../routes/greet');\n\ntest('shouts', () => assert.equal(lib.shout('hi'), 'HI!'));\n",
    };
    const task = await openTask({
      base,
      player,
      criterion: 'shout(text) returns the text in upper case with "!"',
      evidence: [{ criterion: 'AC-001', test: 'shouts' }],
    });
    const refused = await task.approve();
    expect(refused.run.status).toBe('passed');
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(
      /new test shouts passed in the worktree but failed with the base's test infrastructure.*package\.json/,
    );
  }, 240_000);
});

describe("test support named by the runner config stays the base's, even inside src/ (vitest)", () => {
  it('refuses a weakened setupFiles matcher in src/support together with broken code', async () => {
    const matcher = (check: string) =>
      `import { expect } from 'vitest';\n\nexpect.extend({\n  toGreet(received, name) {\n    return { pass: ${check}, message: () => \`\${received} does not greet \${name}\` };\n  },\n});\n`;
    const lib = (greeting: string) =>
      `export function greet(name) {\n  return \`${greeting}\${name}!\`;\n}\n`;
    const base = {
      'package.json': JSON.stringify({ type: 'module', scripts: { test: 'vitest run' } }),
      '.gitignore': 'node_modules/\n',
      'vitest.config.js':
        "export default { test: { setupFiles: ['./src/support/matchers.js'] } };\n",
      'src/support/matchers.js': matcher('received === `Hello, ${name}!`'),
      'src/lib.js': lib('Hello, '),
      'test/lib.test.js':
        "import { expect, test } from 'vitest';\nimport { greet } from '../src/lib.js';\n\ntest('greets by name', () => expect(greet('Ada')).toGreet('Ada'));\n",
    };
    const task = await openTask({
      base,
      player: {
        'src/lib.js': lib('Hi '),
        'src/support/matchers.js': matcher('received.includes(name)'),
      },
      criterion: 'greet keeps working',
      evidence: [{ criterion: 'AC-001', file: 'src/lib.js', snippet: 'return' }],
      beforePin: (repo) =>
        symlinkSync(path.resolve('node_modules'), path.join(repo.dir, 'node_modules')),
    });
    const refused = await task.approve();
    expect(refused.run.status).toBe('passed');
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(/base test .*greets by name passed at the base but failed/);
    expect(refused.text).toMatch(/took these changes from the base.*src\/support\/matchers\.js/);
  }, 240_000);
});

describe.skipIf(!hasPytest)('test support inside a source root stays the base’s (pytest)', () => {
  it.each([
    ['that imports pytest', 'import pytest\n\n'],
    ['with bare asserts, no test framework', ''],
  ])(
    'refuses a weakened assertion helper %s in src/shop together with broken code',
    async (_name, prefix) => {
      const helper = (check: string) =>
        `${prefix}from shop.text import slug\n\n\ndef assert_slug(text, expected):\n    ${check}\n`;
      await approvedThenRefused({
        base: {
          'pyproject.toml':
            '[project]\nname = "shop"\nversion = "1.0"\n[tool.setuptools.packages.find]\nwhere = ["src"]\n[tool.pytest.ini_options]\npythonpath = ["src"]\n',
          'src/shop/__init__.py': '',
          'src/shop/text.py': SLUG,
          'src/shop/checks.py': helper('assert slug(text) == expected'),
          'tests/test_text.py':
            'from shop.checks import assert_slug\n\n\ndef test_slug():\n    assert_slug("A B", "a-b")\n',
        },
        honest: {
          'src/shop/text.py': SLUG + SHOUT,
          'tests/test_shout.py': pythonTests('shop.text').shout,
        },
        tactic: {
          'src/shop/text.py': SLUG.replace('.lower()', '') + SHOUT,
          // Passes whatever slug() returns: the Player's own run is green.
          'src/shop/checks.py': helper('assert slug(text) is not None'),
        },
        evidence: [{ criterion: 'AC-001', test: 'test_shout' }],
        taken: { taken_from_player: ['src/shop/text.py'] },
        refusal:
          /base test tests\/test_text\.py::test_slug passed at the base but failed in the trusted run/,
      });
    },
    240_000,
  );
});
