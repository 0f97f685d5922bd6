import { describe, expect, it } from 'vitest';
import { runnerSetupFiles } from '../../src/scope/runner-setup-files.js';

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

  const startFiles = new Set([
    'app/instrument.js',
    'app/register.mjs',
    'lib/index.js',
    'tools/transform.js',
    'tools/env.js',
    'hooks/load.mjs',
    'src/server.js',
    'src/tracing.js',
  ]);

  it("finds node's preloads in the test scripts: node's flags and the NODE_OPTIONS they set", () => {
    const scripts = {
      test: 'NODE_OPTIONS="--import ./app/register.mjs" node -r ./app/instrument.js --test',
      pretest: 'rm -r lib && cross-env NODE_OPTIONS=--loader=./hooks/load.mjs tsc',
      // Not a test script: what `start` preloads is the product's own start.
      start: 'node -r ./src/tracing.js src/server.js',
    };
    const configs = new Map([['package.json', JSON.stringify({ scripts })]]);
    expect(runnerSetupFiles(configs, startFiles).sort()).toEqual([
      'app/instrument.js',
      'app/register.mjs',
      'hooks/load.mjs',
    ]);
  });

  it("finds jest's transform, environment and runner modules, and mocha's node-option", () => {
    const configs = new Map([
      [
        'jest.config.js',
        "module.exports = { transform: { '^.+\\.js$': ['./tools/transform.js', {}] }, testEnvironment: './tools/env.js' };",
      ],
      ['.mocharc.json', JSON.stringify({ 'node-option': ['import=./app/register.mjs'] })],
      ['package.json', JSON.stringify({ jest: { testRunner: './app/instrument.js' } })],
    ]);
    expect(runnerSetupFiles(configs, startFiles).sort()).toEqual([
      'app/instrument.js',
      'app/register.mjs',
      'tools/env.js',
      'tools/transform.js',
    ]);
  });

  it("finds pytest's plugins and Python's start-up file that a config's environment names", () => {
    const configs = new Map([
      [
        'tox.ini',
        '[testenv]\nsetenv =\n    PYTEST_ADDOPTS = -p app.fixtures\n    PYTEST_PLUGINS = tests.plugin\n    PYTHONSTARTUP = tools/start.py\n',
      ],
    ]);
    const withStart = new Set([...files, 'tools/start.py']);
    expect(runnerSetupFiles(configs, withStart).sort()).toEqual([
      'app/fixtures/__init__.py',
      'tests/plugin.py',
      'tools/start.py',
    ]);
  });
});
