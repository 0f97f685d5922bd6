import { describe, expect, it } from 'vitest';
import { goImports } from '../../src/analysis/imports/go.js';
import { pythonImports } from '../../src/analysis/imports/python.js';
import {
  followImports,
  importsTestFramework,
  resolveImports,
  type ImportIndex,
} from '../../src/scope/import-reach.js';

function index(files: string[], pythonRoots = [''], jsPackages = new Map()): ImportIndex {
  const directories = new Set<string>();
  for (const file of files) {
    const parts = file.split('/');
    for (let depth = 1; depth < parts.length; depth += 1)
      directories.add(parts.slice(0, depth).join('/'));
  }
  return { files: new Set(files), directories, pythonRoots, jsPackages };
}
const py = (text: string) => ({ language: 'python' as const, imports: pythonImports(text) });
const js = (...specifiers: string[]) => ({ language: 'javascript' as const, specifiers });
const go = (text: string) => ({ language: 'go' as const, packages: goImports(text) });

describe('resolveImports', () => {
  it('resolves Python modules, their packages, submodules named after from, and relative imports', () => {
    const repo = index([
      'app/__init__.py',
      'app/models.py',
      'app/views/__init__.py',
      'app/views/home.py',
      'tests/test_app.py',
    ]);
    expect(
      resolveImports(
        'tests/test_app.py',
        py('from app.views import home\nimport app.models'),
        repo,
      ),
    ).toEqual(['app/__init__.py', 'app/views/__init__.py', 'app/views/home.py', 'app/models.py']);
    expect(resolveImports('app/views/home.py', py('from ..models import User'), repo)).toEqual([
      'app/models.py',
    ]);
  });

  it('finds modules of a namespace package and on a configured root, not the standard library', () => {
    const repo = index(['svc/text.py', 'src/shop/__init__.py', 'tests/t.py'], ['', 'src']);
    expect(
      resolveImports('tests/t.py', py('import os\nfrom svc.text import slug\nimport shop'), repo),
    ).toEqual(['svc/text.py', 'src/shop/__init__.py']);
  });

  it('resolves JS relative specifiers with extensions, index files, TS sources and self-references', () => {
    const packages = new Map([
      ['shop', { directory: 'packages/shop', entries: ['./lib/main.js'] }],
    ]);
    const repo = index(
      ['app/a.js', 'app/b/index.ts', 'src/c.ts', 'packages/shop/lib/main.js', 'test/x.test.js'],
      [''],
      packages,
    );
    expect(
      resolveImports(
        'test/x.test.js',
        js('../app/a', '../app/b', '../src/c.js', 'shop', 'left-pad', '../../outside.js'),
        repo,
      ),
    ).toEqual(['app/a.js', 'app/b/index.ts', 'src/c.ts', 'packages/shop/lib/main.js']);
  });
  it("resolves a directory as Node does: require('..') and require('./lib') load its package.json's main, else its index", () => {
    const packages = new Map([
      ['mime-types', { directory: '', entries: ['index.js'] }],
      ['sub', { directory: 'lib/sub', entries: ['./main'] }],
    ]);
    const repo = index(
      ['index.js', 'score.js', 'lib/sub/main.js', 'lib/plain/index.js', 'test/test.js'],
      [''],
      packages,
    );
    expect(resolveImports('test/test.js', js('..', '../lib/sub', '../lib/plain'), repo)).toEqual([
      'index.js',
      'lib/sub/main.js',
      'lib/plain/index.js',
    ]);
    expect(resolveImports('index.js', js('./score'), repo)).toEqual(['score.js']);
  });
});

describe('Go imports', () => {
  it('reads single, grouped, named, dot and blank imports, and stops at the first declaration', () => {
    const text = [
      '// Package shout: import "not/this" in a comment.',
      'package shout',
      '',
      'import "strings"',
      'import m "math" // a named import',
      'import (',
      '\t"fmt" /* one */',
      '\t. "example.com/shout/dot"',
      '\t_ "example.com/shout/blank"',
      '\t`example.com/shout/raw`',
      ')',
      '',
      'func f() { _ = "import \\"late\\"" }',
      'import "never/reached"',
    ].join('\n');
    expect(goImports(text)).toEqual([
      'strings',
      'math',
      'fmt',
      'example.com/shout/dot',
      'example.com/shout/blank',
      'example.com/shout/raw',
    ]);
  });

  it("resolves a module's packages to their non-test files, and a test file to its own package", () => {
    const repo = {
      ...index([
        'go.mod',
        'shout.go',
        'shout_test.go',
        'text/upper.go',
        'text/upper_test.go',
        'text/testdata/gen.go',
        'nested/go.mod',
        'nested/x/x.go',
      ]),
      goModules: new Map([
        ['example.com/shout', ''],
        ['example.com/shout/nested', 'nested'],
      ]),
    };
    expect(resolveImports('shout_test.go', go('import "example.com/shout/text"'), repo)).toEqual([
      'text/upper.go',
      'shout.go',
    ]);
    expect(
      resolveImports('shout.go', go('import (\n\t"example.com/shout/nested/x"\n\t"os"\n)'), repo),
    ).toEqual(['nested/x/x.go']);
  });

  it('calls a package that imports testing test support, unless the import is of the module itself', () => {
    const modules = { ...index([]), goModules: new Map([['github.com/stretchr/testify', '']]) };
    expect(importsTestFramework(go('import "testing"'), modules)).toBe(true);
    expect(importsTestFramework(go('import "github.com/stretchr/testify/require"'))).toBe(true);
    expect(importsTestFramework(go('import "github.com/stretchr/testify/assert"'), modules)).toBe(
      false,
    );
    expect(importsTestFramework(go('import "net/http/httptest"'), modules)).toBe(false);
  });
});

describe('followImports', () => {
  it('takes what the tests reach as code, and a reached module that imports a test framework as support', async () => {
    const texts = new Map([
      ['tests/test_a.py', 'from app.core import run\nfrom app.checks import assert_ok\n'],
      ['app/__init__.py', ''],
      ['app/core.py', 'from .util import helper\n'],
      ['app/util.py', ''],
      ['app/checks.py', 'import pytest\nfrom app.core import run\n'],
      ['app/unused.py', ''],
    ]);
    const repo = index([...texts.keys()]);
    const reached = await followImports(
      ['tests/test_a.py'],
      repo,
      async (files) => new Map(files.filter((f) => texts.has(f)).map((f) => [f, texts.get(f)!])),
      (_file, text) => py(text),
    );
    expect(Object.fromEntries(reached.code)).toEqual({
      'app/__init__.py': 'imported by tests/test_a.py',
      'app/core.py': 'imported by tests/test_a.py',
      'app/util.py': 'imported by app/core.py, reached from tests/test_a.py',
    });
    expect([...reached.support.keys()]).toEqual(['app/checks.py']);
  });

  it('does not call a product module that uses node:assert test support', () => {
    expect(importsTestFramework(js('node:assert', './x.js'))).toBe(false);
    expect(importsTestFramework(js('vitest'))).toBe(true);
    expect(importsTestFramework(py('import unittest.mock'))).toBe(true);
    expect(importsTestFramework(py('import doctest'))).toBe(false);
  });
});
