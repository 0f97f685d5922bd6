import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasPytest } from '../helpers/python-task.js';
import { layoutTasks, linesOf } from '../helpers/layout-task.js';

/**
 * Code the tests load that no import names: a plugin module found by `importlib`. The static walk
 * cannot reach it, so no rule takes it; the Player's own pytest run lists what it imported, and an
 * approval whose trusted runs judged the base's version of such a file is refused, through MCP.
 */
const openTask = layoutTasks();

const REGISTRY = [
  'import importlib',
  '',
  '',
  'def transform(name, text):',
  '    return importlib.import_module("app.plugins." + name).apply(text)',
  '',
].join('\n');
const base = {
  'pytest.ini': '[pytest]\npythonpath = .\n',
  'app/__init__.py': '',
  'app/registry.py': REGISTRY,
  'app/plugins/__init__.py': '',
  'app/plugins/upper.py': 'def apply(text):\n    return text.upper()\n',
  'tests/test_registry.py':
    'from app.registry import transform\n\n\ndef test_upper():\n    assert transform("upper", "ab") == "AB"\n',
};
const criterion = 'the upper plugin trims the text before upper-casing it';
const TRIMMED_TEST =
  'from app.registry import transform\n\n\ndef test_trims():\n    assert transform("upper", " ab ") == "AB"\n';

describe.skipIf(!hasPytest)('changed code the tests load but no import names (pytest)', () => {
  it('refuses it untaken, naming the file and the acknowledgement; judges it once acknowledged', async () => {
    const task = await openTask({
      base,
      player: {
        // Taken (the base's test imports it), so the evaluation is not vacuous.
        'app/registry.py': `"""Plugins by name."""\n${REGISTRY}`,
        // Broken, and the base test weakened to match: the Player's run is green.
        'app/plugins/upper.py': 'def apply(text):\n    return text\n',
        'tests/test_registry.py': base['tests/test_registry.py'].replace('"AB"', '"ab"'),
      },
      criterion,
      evidence: [{ criterion: 'AC-001', test: 'test_upper' }],
    });
    const refused = await task.approve();
    expect(refused.run.changed_files_loaded).toEqual(
      expect.arrayContaining(['app/plugins/upper.py', 'app/registry.py']),
    );
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toContain('changed code the tests load was not judged');
    expect(refused.text).toContain('"file": "app/plugins/upper.py"');
    // The taken file is not named as unjudged: only the one the trusted runs left out.
    expect(refused.text).not.toMatch(/imported app\/registry\.py/);

    // Acknowledged, the file is judged: the base test now fails on the Player's plugin.
    const judged = await task.approve({
      acknowledged_left_out: [
        { file: 'app/plugins/upper.py', reason: 'the plugin the task changes' },
      ],
    });
    expect(judged.result.isError).toBe(true);
    expect(judged.text).not.toContain('was not judged');
    expect(judged.text).toMatch(
      /base test tests\/test_registry\.py::test_upper passed at the base/,
    );
  }, 240_000);

  it('approves the honest change to the plugin once the Coach acknowledges it', async () => {
    const task = await openTask({
      base,
      player: {
        'app/plugins/upper.py': 'def apply(text):\n    return text.strip().upper()\n',
        'tests/test_trims.py': TRIMMED_TEST,
      },
      criterion,
      evidence: [{ criterion: 'AC-001', test: 'test_trims' }],
    });
    const approved = await task.approve({
      acknowledged_left_out: [
        { file: 'app/plugins/upper.py', reason: 'the plugin the task changes' },
      ],
    });
    expect(approved.result.isError, approved.text).toBeFalsy();
    expect(approved.evaluation).toMatchObject({
      taken_by_acknowledgement: ['app/plugins/upper.py'],
      unjudged_loaded: [],
    });
  }, 240_000);
});

/**
 * Code that is read and run rather than imported: no module of `sys.modules` names it. The
 * reporter sees the tree's own code open it (Python's `open` audit event), however it then runs.
 */
const READ_REGISTRIES = {
  'runpy.run_path': [
    'import os, runpy',
    '',
    '',
    'def transform(name, text):',
    '    here = os.path.dirname(__file__)',
    '    return runpy.run_path(os.path.join(here, "plugins", name + ".py"))["apply"](text)',
    '',
  ].join('\n'),
  'exec of the source it reads': [
    'import os',
    '',
    '',
    'def transform(name, text):',
    '    file = os.path.join(os.path.dirname(__file__), "plugins", name + ".py")',
    '    scope = {}',
    '    with open(file) as source:',
    '        exec(compile(source.read(), file, "exec"), scope)',
    '    return scope["apply"](text)',
    '',
  ].join('\n'),
};

describe.skipIf(!hasPytest)(
  'changed code the tests read and run, not import (pytest installed)',
  () => {
    it.each(Object.entries(READ_REGISTRIES))(
      '%s: refuses it untaken, naming the file; judges it once acknowledged',
      async (_how, registry) => {
        const task = await openTask({
          base: { ...base, 'app/registry.py': registry },
          player: {
            'app/registry.py': `"""Plugins by name."""\n${registry}`,
            'app/plugins/upper.py': 'def apply(text):\n    return text\n',
            'tests/test_registry.py': base['tests/test_registry.py'].replace('"AB"', '"ab"'),
          },
          criterion,
          evidence: [{ criterion: 'AC-001', test: 'test_upper' }],
        });
        const refused = await task.approve();
        expect(refused.run.changed_files_loaded).toEqual(
          expect.arrayContaining(['app/plugins/upper.py']),
        );
        expect(refused.result.isError).toBe(true);
        expect(refused.text).toContain('changed code the tests load was not judged');
        expect(refused.text).toContain('"file": "app/plugins/upper.py"');
        const judged = await task.approve({
          acknowledged_left_out: [
            { file: 'app/plugins/upper.py', reason: 'the plugin the task changes' },
          ],
        });
        expect(judged.result.isError).toBe(true);
        expect(judged.text).not.toContain('was not judged');
        expect(judged.text).toMatch(
          /base test tests\/test_registry\.py::test_upper passed at the base/,
        );
      },
      240_000,
    );
  },
);

/**
 * The same through node's runners, which list nothing themselves: coachgate's recorder, loaded
 * first in every test process, lists what `node --test` children (ES modules) and mocha (CommonJS)
 * load and what jest compiles, and a reporter lists vitest's module graph. The plugin is reached
 * by a computed import or require that no static walk follows.
 */
const NODE_REGISTRY = linesOf(
  'export async function transform(name, text) {',
  "  const plugin = await import('./plugins/' + name + '.js');",
  '  return plugin.apply(text);',
  '}',
);
const NODE_TEST = linesOf(
  "import test from 'node:test';",
  "import assert from 'node:assert/strict';",
  "import { transform } from '../app/registry.js';",
  '',
  "test('upper', async () => assert.equal(await transform('upper', 'ab'), 'AB'));",
);
const VITEST_TEST = linesOf(
  "import { expect, test } from 'vitest';",
  "import { transform } from '../app/registry.js';",
  '',
  "test('upper', async () => expect(await transform('upper', 'ab')).toBe('AB'));",
);
const CJS_REGISTRY = linesOf(
  'exports.transform = (name, text) => require(`./plugins/${name}`).apply(text);',
);
const MOCHA_TEST = linesOf(
  "const assert = require('node:assert/strict');",
  "const { transform } = require('../app/registry');",
  '',
  "it('upper', () => assert.equal(transform('upper', 'ab'), 'AB'));",
);
const JEST_TEST = linesOf(
  "const { transform } = require('../app/registry');",
  '',
  "test('upper', () => expect(transform('upper', 'ab')).toBe('AB'));",
);
/** An ES-module app whose test script runs `script` over `test/registry.test.js`. */
const esmLayout = (script: string, testText: string) => ({
  base: {
    'package.json': JSON.stringify({ type: 'module', scripts: { test: script } }),
    '.gitignore': 'node_modules/\n',
    'app/registry.js': NODE_REGISTRY,
    'app/plugins/upper.js': 'export const apply = (text) => text.toUpperCase();\n',
    'test/registry.test.js': testText,
  },
  broken: { 'app/plugins/upper.js': 'export const apply = (text) => text;\n' },
  test: 'test/registry.test.js',
  id: 'upper',
});
/** A CommonJS app whose test script runs `script` over `test`. */
const cjsLayout = (script: string, test: string, testText: string) => ({
  base: {
    'package.json': JSON.stringify({ scripts: { test: script } }),
    '.gitignore': 'node_modules/\n',
    'app/registry.js': CJS_REGISTRY,
    'app/plugins/upper.js': 'exports.apply = (text) => text.toUpperCase();\n',
    [test]: testText,
  },
  broken: { 'app/plugins/upper.js': 'exports.apply = (text) => text;\n' },
  test,
  id: 'upper',
});
/** The ES-module app with loader hooks registered (`module.register`), as tsx and ts-node do. */
const hookedLayout = () => {
  const layout = esmLayout('node --import ./hooks/register.js --test', NODE_TEST);
  return {
    ...layout,
    base: {
      ...layout.base,
      'hooks/register.js': linesOf(
        "import { register } from 'node:module';",
        "register('./load.js', import.meta.url);",
      ),
      'hooks/load.js': 'export const load = (url, context, next) => next(url, context);\n',
    },
  };
};
const nodeLayouts = {
  'node --test (ES modules)': esmLayout('node --test', NODE_TEST),
  'node --test with loader hooks (their own thread)': hookedLayout(),
  'vitest (its module graph)': esmLayout('vitest run', VITEST_TEST),
  'mocha (CommonJS)': cjsLayout('mocha', 'test/registry.spec.js', MOCHA_TEST),
  'jest (its own module system)': cjsLayout('jest', 'test/registry.test.js', JEST_TEST),
};

describe('changed code the tests load but no import names (node --test, vitest, mocha, jest)', () => {
  it.each(Object.entries(nodeLayouts))(
    '%s: refuses the untaken plugin broken under a weakened test, naming the file',
    async (_name, layout) => {
      const task = await openTask({
        base: layout.base,
        player: {
          // Taken (the base's test imports it), so the evaluation is not vacuous.
          'app/registry.js': `// Plugins by name.\n${layout.base['app/registry.js']}`,
          ...layout.broken,
          [layout.test]: layout.base[layout.test as keyof typeof layout.base].replace(
            "'AB'",
            "'ab'",
          ),
        },
        criterion,
        evidence: [{ criterion: 'AC-001', test: layout.id }],
        beforePin: (repo) =>
          symlinkSync(path.resolve('node_modules'), path.join(repo.dir, 'node_modules')),
      });
      const refused = await task.approve();
      expect(refused.run.status, refused.run.summary).toBe('passed');
      expect(refused.run.changed_files_loaded).toEqual(
        expect.arrayContaining(['app/plugins/upper.js', layout.test]),
      );
      expect(refused.result.isError).toBe(true);
      expect(refused.text).toContain('changed code the tests load was not judged');
      expect(refused.text).toContain('"file": "app/plugins/upper.js"');
    },
    240_000,
  );
});

/**
 * Code read and run rather than imported, through node's runners: the recorder lists each file of
 * the tree that the code reads (fs's read routes) with its reader, so a plugin read and run through
 * `vm` or `new Function` is loaded as much as an imported one.
 */
const VM_REGISTRY = linesOf(
  "import { readFileSync } from 'node:fs';",
  "import vm from 'node:vm';",
  '',
  'export function transform(name, text) {',
  "  const source = readFileSync(new URL(`./plugins/${name}.js`, import.meta.url), 'utf8');",
  '  const scope = { exports: {} };',
  '  vm.runInNewContext(source, scope);',
  '  return scope.exports.apply(text);',
  '}',
);
const FUNCTION_REGISTRY = linesOf(
  "const { readFile } = require('node:fs/promises');",
  "const path = require('node:path');",
  '',
  'exports.transform = async (name, text) => {',
  "  const source = await readFile(path.join(__dirname, 'plugins', `${name}.js`), 'utf8');",
  '  const plugin = {};',
  "  new Function('exports', source)(plugin);",
  '  return plugin.apply(text);',
  '};',
);
const readLayouts = {
  'node --test, readFileSync then vm': {
    ...esmLayout('node --test', NODE_TEST),
    registry: VM_REGISTRY,
    plugin: 'exports.apply = (text) => text.toUpperCase();\n',
    broken: { 'app/plugins/upper.js': 'exports.apply = (text) => text;\n' },
  },
  'mocha, fs.promises.readFile then new Function': {
    ...cjsLayout('mocha', 'test/registry.spec.js', MOCHA_TEST),
    registry: FUNCTION_REGISTRY,
    plugin: 'exports.apply = (text) => text.toUpperCase();\n',
  },
};
const ASYNC_MOCHA_TEST = MOCHA_TEST.replace(
  "it('upper', () => assert.equal(transform('upper', 'ab'), 'AB'));",
  "it('upper', async () => assert.equal(await transform('upper', 'ab'), 'AB'));",
);

describe('changed code the tests read and run, not import (node --test, mocha)', () => {
  it.each(Object.entries(readLayouts))(
    '%s: refuses the untaken plugin broken under a weakened test, naming the file',
    async (_how, layout) => {
      const testText = layout.test.endsWith('.spec.js')
        ? ASYNC_MOCHA_TEST
        : layout.base[layout.test as keyof typeof layout.base];
      const base = {
        ...layout.base,
        'app/registry.js': layout.registry,
        'app/plugins/upper.js': layout.plugin,
        [layout.test]: testText,
      };
      const task = await openTask({
        base,
        player: {
          'app/registry.js': `// Plugins by name.\n${layout.registry}`,
          ...layout.broken,
          [layout.test]: testText.replace("'AB'", "'ab'"),
        },
        criterion,
        evidence: [{ criterion: 'AC-001', test: layout.id }],
        beforePin: (repo) =>
          symlinkSync(path.resolve('node_modules'), path.join(repo.dir, 'node_modules')),
      });
      const refused = await task.approve();
      expect(refused.run.status, refused.run.summary).toBe('passed');
      expect(refused.run.changed_files_loaded).toEqual(
        expect.arrayContaining(['app/plugins/upper.js', 'app/registry.js']),
      );
      expect(refused.result.isError).toBe(true);
      expect(refused.text).toContain('changed code the tests load was not judged');
      expect(refused.text).toContain('"file": "app/plugins/upper.js"');
    },
    240_000,
  );
});

describe('honest changes to what the code reads (node --test)', () => {
  it('approves a settings file the code reads at run time, changed with its test, once acknowledged', async () => {
    const units = (extra: string) => `{ "km": 1000${extra} }\n`;
    const task = await openTask({
      base: {
        'package.json': JSON.stringify({ type: 'module', scripts: { test: 'node --test' } }),
        'app/convert.js': linesOf(
          "import { readFileSync } from 'node:fs';",
          '',
          'export function toMetres(value, unit) {',
          "  const units = JSON.parse(readFileSync(new URL('./units.json', import.meta.url)));",
          '  return value * units[unit];',
          '}',
        ),
        'app/units.json': units(''),
        'test/convert.test.js': linesOf(
          "import test from 'node:test';",
          "import assert from 'node:assert/strict';",
          "import { toMetres } from '../app/convert.js';",
          '',
          "test('km', () => assert.equal(toMetres(2, 'km'), 2000));",
        ),
      },
      player: {
        'app/units.json': units(', "cm": 0.01'),
        'test/cm.test.js': linesOf(
          "import test from 'node:test';",
          "import assert from 'node:assert/strict';",
          "import { toMetres } from '../app/convert.js';",
          '',
          "test('cm', () => assert.equal(toMetres(200, 'cm'), 2));",
        ),
      },
      criterion: 'toMetres converts centimetres',
      evidence: [{ criterion: 'AC-001', test: 'cm' }],
    });
    // No rule makes a data file code: the run saw the code read it, so the approval names it.
    const named = await task.approve();
    expect(named.run.changed_files_loaded).toEqual(['app/units.json', 'test/cm.test.js']);
    expect(named.result.isError).toBe(true);
    expect(named.text).toContain('"file": "app/units.json"');
    const approved = await task.approve({
      acknowledged_left_out: [{ file: 'app/units.json', reason: 'the units the product reads' }],
    });
    expect(approved.result.isError, approved.text).toBeFalsy();
    expect(approved.evaluation).toMatchObject({
      taken_by_acknowledgement: ['app/units.json'],
      unjudged_loaded: [],
    });
  }, 240_000);
});
