import { beforeAll, describe, expect, it } from 'vitest';
import { importAliases } from '../../src/analysis/import-aliases.js';
import { loadTypeScript } from '../../src/analysis/typescript-parser.js';
import { resolveImports } from '../../src/scope/import-reach.js';

/** Which repository files `specifiers`, imported from `from`, name under the configs' aliases. */
function resolved(
  configs: Record<string, string>,
  files: string[],
  from: string,
  ...specifiers: string[]
) {
  const index = {
    files: new Set(files),
    directories: new Set<string>(),
    pythonRoots: [],
    jsPackages: new Map(),
    aliases: importAliases(new Map(Object.entries(configs))),
  };
  return resolveImports(from, { language: 'javascript', specifiers }, index);
}

describe('importAliases', () => {
  beforeAll(loadTypeScript);

  it('follows tsconfig paths and baseUrl through an extended tsconfig with comments', () => {
    const configs = {
      'tsconfig.base.json': [
        '{',
        '  // shared',
        '  "compilerOptions": {',
        '    "baseUrl": "./web",',
        '    "paths": { "@/*": ["app/*"], "cfg": ["app/config.ts"] },',
        '  },',
        '}',
      ].join('\n'),
      'tsconfig.json': '{ "extends": "./tsconfig.base", "compilerOptions": { "strict": true } }',
    };
    const files = ['web/app/lib/price.ts', 'web/app/config.ts', 'web/util/round.ts'];
    expect(
      resolved(configs, files, 'test/a.test.ts', '@/lib/price', 'cfg', 'util/round', 'vitest'),
    ).toEqual(['web/app/lib/price.ts', 'web/app/config.ts', 'web/util/round.ts']);
  });

  it('reads vite aliases as objects and find/replacement lists, scoped to their package', () => {
    const config = [
      "import path from 'node:path';",
      "import { fileURLToPath } from 'node:url';",
      "const x = fileURLToPath(new URL('./src/x', import.meta.url));",
      'export default defineConfig({',
      '  resolve: {',
      '    alias: {',
      "      '~': path.resolve(__dirname, './src'),",
      "      '#x': x,",
      '    },',
      '  },',
      '  test: {',
      "    alias: [{ find: /^@@\\//, replacement: '/src/' },",
      "      { find: 'lib', replacement: '/vendor' }],",
      '  },',
      '});',
    ].join('\n');
    const files = ['web/src/a.ts', 'web/src/x/index.ts', 'web/src/b.tsx', 'web/vendor/c.js'];
    const specifiers = ['~/a', '#x', '@@/b', 'lib/c', 'library'];
    expect(
      resolved({ 'web/vite.config.ts': config }, files, 'web/test/a.test.ts', ...specifiers),
    ).toEqual(['web/src/a.ts', 'web/src/x/index.ts', 'web/src/b.tsx', 'web/vendor/c.js']);
    // Outside the config's directory the aliases do not hold.
    expect(resolved({ 'web/vite.config.ts': config }, files, 'api/test/a.test.ts', '~/a')).toEqual(
      [],
    );
  });

  it('reads jest moduleNameMapper (jest config, package.json), <rootDir> targets only', () => {
    const jestConfig = [
      'module.exports = {',
      "  rootDir: '.',",
      "  moduleNameMapper: { '^@lib/(.*)$': ['<rootDir>/lib/$1'],",
      "    '\\\\.css$': 'identity-obj-proxy' },",
      '};',
    ].join('\n');
    const manifest = JSON.stringify({
      jest: { moduleNameMapper: { '^#(.*)$': '<rootDir>/other/$1' } },
    });
    const files = ['lib/q.js', 'other/r.ts', 'style.css'];
    expect(
      resolved(
        { 'jest.config.js': jestConfig, 'package.json': manifest },
        files,
        'test/a.test.js',
        '@lib/q',
        '#r',
        './style.css',
      ),
    ).toEqual(['lib/q.js', 'other/r.ts']);
  });
});
