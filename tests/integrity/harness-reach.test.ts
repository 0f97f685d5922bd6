import { describe, expect, it } from 'vitest';
import { harnessReachFindings } from '../../src/integrity/harness-reach.js';

/** The classes named for the lines a Player adds to product file `path` (over `base`). */
const classesOf = (path: string, now: string, base = '') =>
  harnessReachFindings([{ path, base, now }]).map(
    (finding) => `${finding.line} ${finding.detail.split(':')[0]}`,
  );

describe('harnessReachFindings', () => {
  it.each([
    [
      'a str subclass redefining __eq__',
      'class Slug(str):\n    def __eq__(self, other):\n        return self.lower() == str(other).lower()\n',
      ['2 lying_equality'],
    ],
    [
      'an __eq__ that ignores its argument',
      'class Result:\n    def __eq__(self, other):\n        return True\n',
      ['2 lying_equality'],
    ],
    ['a test framework imported', 'import pytest\n', ['1 test_machinery']],
    [
      'an assertion method replaced at import time',
      'import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n',
      ['1 test_machinery', '2 monkeypatching'],
    ],
    [
      'the caller inspected',
      'import inspect\n\ndef f():\n    return inspect.stack()[1]\n',
      ['4 interpreter_hooks'],
    ],
    [
      'the module table edited',
      'import sys\nsys.modules["json"] = None\n',
      ['2 interpreter_hooks'],
    ],
    [
      "the caller's locals read",
      'import sys\n\ndef f():\n    return sys._getframe(1).f_locals["expected"]\n',
      ['4 interpreter_hooks'],
    ],
    [
      'a forced clean exit',
      'import atexit, os\natexit.register(lambda: os._exit(0))\n',
      ['2 interpreter_hooks'],
    ],
    [
      'a write into the tests',
      'from pathlib import Path\nPath("tests/expected.json").write_text("{}")\n',
      ['2 writes_test_files'],
    ],
  ])('flags %s (Python)', (_name, now, expected) => {
    expect(classesOf('app/x.py', now)).toEqual(expected);
  });

  it.each([
    [
      'node:assert patched',
      "import assert from 'node:assert';\nassert.equal = () => {};\n",
      ['2 test_machinery'],
    ],
    ['vitest imported', "import { expect } from 'vitest';\n", ['1 test_machinery']],
    [
      "jest's matcher store reached",
      "const store = globalThis[Symbol.for('$$jest-matchers-object')];\nstore.matchers.toBe = () => ({ pass: true });\n",
      ['1 test_machinery'],
    ],
    [
      'a toPrimitive trick',
      'export const v = { [Symbol.toPrimitive]() { return 5; } };\n',
      ['1 lying_equality'],
    ],
    ['stdout replaced', 'process.stdout.write = () => true;\n', ['1 process_hooks']],
    ['the stack read', 'const caller = new Error().stack.split("\\n")[2];\n', ['1 process_hooks']],
    [
      'the loader hooked',
      "const Module = require('module');\nModule._load = load;\n",
      ['2 process_hooks'],
    ],
    [
      'a package export replaced',
      "const fs = require('node:fs');\nfs.readFileSync = () => '';\n",
      ['2 monkeypatching'],
    ],
  ])('flags %s (JS)', (_name, now, expected) => {
    expect(classesOf('src/x.js', now)).toEqual(expected);
  });

  it('leaves honest product code alone', () => {
    const python = [
      'import os',
      'import sys',
      'from dataclasses import dataclass',
      'from . import settings',
      '',
      'os.environ["LOG_LEVEL"] = "info"',
      'settings.DEBUG = False',
      '',
      'class Point:',
      '    def __eq__(self, other):',
      '        return (self.x, self.y) == (other.x, other.y)',
      '',
      '    def __hash__(self):',
      '        return hash((self.x, self.y))',
      '',
      'def main():',
      '    print(sys.argv[1:])',
      '    with open("out/report.txt", "w") as handle:',
      '        handle.write("done")',
      '    sys.exit(0)',
      '',
    ].join('\n');
    expect(classesOf('app/cli.py', python)).toEqual([]);
    // Seen in real packages (click, six, requests): the caller's module name, the package's own
    // aliases in sys.modules, a read of the import machinery.
    const packaging = [
      'import sys',
      'from os import environ',
      'environ["LANG"] = "C"',
      'module = sys._getframe(1).f_globals.get("__name__")',
      'sys.modules[__name__ + ".moves"] = Moves()',
      'sys.modules["%s.idna" % __name__] = idna',
      'sys.modules["app.compat"] = compat',
      'sys.modules[f"app.packages.{name}"] = module',
      'finders = [finder for finder in sys.meta_path]',
    ].join('\n');
    expect(classesOf('src/app/compat.py', packaging)).toEqual([]);
    const js = [
      "import assert from 'node:assert';",
      "import config from './config.js';",
      'config.port = 3000;',
      'export function main(argv = process.argv.slice(2)) {',
      "  assert(argv.length > 0, 'usage: tool <name>');",
      '  process.stdout.write(`${argv[0]}\\n`);',
      '  process.exitCode = 1;',
      '  return new Date().valueOf();',
      '}',
    ].join('\n');
    expect(classesOf('src/cli.js', js)).toEqual([]);
  });

  it('judges only lines the Player added', () => {
    const base = 'import inspect\n\ndef f():\n    return inspect.stack()[1]\n';
    expect(classesOf('app/x.py', `${base}\n\ndef g():\n    return 1\n`, base)).toEqual([]);
  });
});
