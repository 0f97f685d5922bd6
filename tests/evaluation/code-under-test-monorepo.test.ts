import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'vitest';
import { approvedThenRefused, linesOf } from '../helpers/layout-task.js';
import { hasPytest } from '../helpers/python-task.js';

/**
 * Code under test in monorepos, through the MCP client with real runners: a workspace package
 * imported by its package name from another workspace's test (node --test), and a Python service
 * in a subfolder with its own pytest.ini (pytest). The honest change is approved; "break the
 * code, weaken the base test to match" is refused.
 */
const REFUSED = /base test .*passed at the base but failed in the trusted run/;

describe('a JS workspace package imported by name from another workspace (node --test)', () => {
  const greet = (greeting: string, extra = '') =>
    linesOf(
      'function greet(name) {',
      `  return \`${greeting}\${name}!\`;`,
      '}',
      extra,
      `module.exports = { greet${extra ? ', shout' : ''} };`,
    );
  const SHOUT = '\nfunction shout(text) {\n  return `${text.toUpperCase()}!`;\n}\n';
  const test = (name: string, body: string) =>
    linesOf(
      "const test = require('node:test');",
      "const assert = require('node:assert/strict');",
      `const { ${name} } = require('@acme/core/greet');`,
      '',
      body,
    );
  const greets = (expected: string) =>
    test('greet', `test('greets by name', () => assert.equal(greet('Ada'), '${expected}'));`);

  it('@acme/core/greet from packages/app/test: approved, then refused', async () => {
    await approvedThenRefused({
      base: {
        'package.json': JSON.stringify({
          private: true,
          workspaces: ['packages/*'],
          scripts: { test: 'node --test' },
        }),
        '.gitignore': 'node_modules/\n',
        'packages/core/package.json': JSON.stringify({ name: '@acme/core' }),
        'packages/core/greet.js': greet('Hello, '),
        'packages/app/package.json': JSON.stringify({ name: '@acme/app' }),
        'packages/app/test/greet.test.js': greets('Hello, Ada!'),
      },
      honest: {
        'packages/core/greet.js': greet('Hello, ', SHOUT),
        'packages/app/test/shout.test.js': test(
          'shout',
          "test('shouts', () => assert.equal(shout('hi'), 'HI!'));",
        ),
      },
      tactic: {
        'packages/core/greet.js': greet('Hi ', SHOUT),
        'packages/app/test/greet.test.js': greets('Hi Ada!'),
      },
      evidence: [{ criterion: 'AC-001', test: 'shouts' }],
      // No manifest field declares greet.js: the package's name is what reaches it.
      taken: {
        taken_from_player: ['packages/core/greet.js'],
        taken_because: [
          { file: 'packages/core/greet.js', reason: 'imported by packages/app/test/greet.test.js' },
        ],
      },
      refusal: REFUSED,
      // What `npm install` links for a workspace: node_modules/@acme/core -> packages/core.
      beforePin: (repo) => {
        mkdirSync(path.join(repo.dir, 'node_modules', '@acme'), { recursive: true });
        symlinkSync('../../packages/core', path.join(repo.dir, 'node_modules', '@acme', 'core'));
      },
    });
  }, 240_000);
});

describe.skipIf(!hasPytest)(
  `a Python service in a subfolder with its own pytest.ini${hasPytest ? '' : ' — skipped: no pytest'}`,
  () => {
    const SLUG = 'def slug(text):\n    return text.lower().replace(" ", "-")\n';
    const SHOUT = '\n\ndef shout(text):\n    return text.upper() + "!"\n';
    const test = (name: string, body: string) =>
      `from app.text import ${name}\n\n\ndef test_${name}():\n    assert ${body}\n`;

    it('services/api/app imported from services/api/tests: approved, then refused', async () => {
      await approvedThenRefused({
        base: {
          '.guardkit/config.yaml': 'toolchain:\n  test: python -m pytest services/api\n',
          'services/api/pytest.ini': '[pytest]\ntestpaths = tests\npythonpath = .\n',
          'services/api/requirements.txt': 'fastapi\n',
          'services/api/app/__init__.py': '',
          'services/api/app/text.py': SLUG,
          'services/api/tests/test_text.py': test('slug', 'slug("A B") == "a-b"'),
        },
        honest: {
          'services/api/app/text.py': SLUG + SHOUT,
          'services/api/tests/test_shout.py': test('shout', 'shout("hi") == "HI!"'),
        },
        tactic: {
          'services/api/app/text.py': SLUG.replace('.lower()', '') + SHOUT,
          'services/api/tests/test_text.py': test('slug', 'slug("A B") == "A-B"'),
        },
        evidence: [{ criterion: 'AC-001', test: 'test_shout' }],
        taken: {
          taken_from_player: ['services/api/app/text.py'],
          taken_because: [
            {
              file: 'services/api/app/text.py',
              reason: 'imported by services/api/tests/test_text.py',
            },
          ],
        },
        refusal: REFUSED,
      });
    }, 240_000);
  },
);
