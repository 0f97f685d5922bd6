import { beforeAll, describe, expect, it } from 'vitest';
import { javascriptImports } from '../../src/analysis/imports/javascript.js';
import { pythonImports } from '../../src/analysis/imports/python.js';
import { loadTypeScript } from '../../src/analysis/typescript-parser.js';

describe('pythonImports', () => {
  it('reads plain, dotted, aliased, relative and parenthesised imports', () => {
    const text = [
      'import os, app.models as models',
      'from . import helpers',
      'from ..core.db import (',
      '    connect,  # a comment',
      '    Session as S,',
      ')',
      'from pkg.sub import \\',
      '    thing',
      'def f():',
      '    import lazy.module',
    ].join('\n');
    expect(pythonImports(text)).toEqual([
      { module: 'os', level: 0, names: [] },
      { module: 'app.models', level: 0, names: [] },
      { module: '', level: 1, names: ['helpers'] },
      { module: 'core.db', level: 2, names: ['connect', 'Session'] },
      { module: 'pkg.sub', level: 0, names: ['thing'] },
      { module: 'lazy.module', level: 0, names: [] },
    ]);
  });

  it('skips import lines inside triple-quoted strings', () => {
    const text = '"""Usage:\n\nimport not_real\n"""\nx = 1  # """\nfrom real import it\n';
    expect(pythonImports(text)).toEqual([{ module: 'real', level: 0, names: ['it'] }]);
  });
});

describe('javascriptImports', () => {
  beforeAll(loadTypeScript);
  it('reads imports, re-exports, require and import() with a literal', () => {
    const text = [
      "import a from './a.js';",
      "export { b } from '../b';",
      "const c = require('./c.cjs');",
      "const d = await import('pkg/d');",
      'const e = require(name);',
    ].join('\n');
    expect(javascriptImports(text)).toEqual(['./a.js', '../b', './c.cjs', 'pkg/d']);
  });
});
