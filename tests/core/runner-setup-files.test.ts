import { describe, expect, it } from 'vitest';
import { runnerSetupFiles } from '../../src/core/runner-setup-files.js';

describe('runnerSetupFiles', () => {
  const files = new Set([
    'web/src/test/setup.ts',
    'web/src/support/global.js',
    'src/matchers.js',
    'tests/plugin.py',
    'app/fixtures/__init__.py',
  ]);

  it('finds what vitest, jest and mocha configs load around the tests, relative to the config', () => {
    const configs = new Map([
      [
        'web/vitest.config.ts',
        "export default defineConfig({ test: { setupFiles: ['./src/test/setup.ts'], globalSetup: 'src/support/global' } });",
      ],
      ['package.json', '{"jest": {"setupFilesAfterEnv": ["<rootDir>/src/matchers.js"]}}'],
      ['.mocharc.json', '{"require": ["ts-node/register", "./src/matchers.js"]}'],
    ]);
    expect(runnerSetupFiles(configs, files).sort()).toEqual([
      'src/matchers.js',
      'web/src/support/global.js',
      'web/src/test/setup.ts',
    ]);
  });

  it("reads package.json's runner sections only: an exports condition named require is the entry", () => {
    const configs = new Map([
      [
        'package.json',
        JSON.stringify({
          main: './lib/defu.cjs',
          exports: { '.': { import: './dist/defu.mjs', require: './lib/defu.cjs' } },
          mocha: { require: './src/matchers.js' },
        }),
      ],
    ]);
    const withEntry = new Set([...files, 'lib/defu.cjs']);
    expect(runnerSetupFiles(configs, withEntry)).toEqual(['src/matchers.js']);
  });

  it("finds pytest's -p plugins of the repository, not disabled or installed ones", () => {
    const configs = new Map([
      [
        'pytest.ini',
        '[pytest]\naddopts = -p tests.plugin -p no:cacheprovider -p xdist -p app.fixtures\n',
      ],
    ]);
    expect(runnerSetupFiles(configs, files).sort()).toEqual([
      'app/fixtures/__init__.py',
      'tests/plugin.py',
    ]);
  });
});
