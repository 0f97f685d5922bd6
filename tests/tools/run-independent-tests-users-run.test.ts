import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connect, dataOf } from '../helpers/mcp.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import {
  installedPackage,
  JEST_VERSION,
  MOCHA_VERSION,
  PACKAGE_MANAGERS,
  packageManagerBinDirectory,
} from '../helpers/runners.js';

/**
 * coachgate's run is the user's run: what it adds to get per-test reports (runner arguments,
 * NODE_OPTIONS preloads, a package manager the machine lacks) never changes what the tests or the
 * programs they start see. Each suite passes raw, and must pass under run_independent_tests too.
 */
let repos: TempRepo[] = [];
afterEach(() => {
  repos.forEach((repo) => repo.remove());
  repos = [];
});

function project(files: Record<string, string>, modules?: string): TempRepo {
  const repo = makeRepo({ '.gitignore': 'node_modules/\n', ...files });
  repos.push(repo);
  if (modules)
    execFileSync('ln', [
      '-s',
      path.join(modules, 'node_modules'),
      path.join(repo.dir, 'node_modules'),
    ]);
  return repo;
}

async function run(repo: TempRepo) {
  const { client, close } = await connect({ roots: [repo.dir] });
  try {
    const result = await callTool(client, 'run_independent_tests', {
      worktree: repo.dir,
      task_id: 'TASK-1',
      timeout_s: 120,
    });
    return dataOf(result);
  } finally {
    await close();
  }
}

/** The raw run (`npm test`, with node_modules/.bin on PATH as npm gives it) passes. */
function expectRawPass(repo: TempRepo, command = ['npm', 'test']): void {
  const raw = spawnSync(command[0]!, command.slice(1), { cwd: repo.dir, encoding: 'utf8' });
  expect(raw.status, raw.stdout + raw.stderr).toBe(0);
}

/** A command-line parser as commander's tests use one: an option it does not know is an error. */
const PARSER =
  "exports.parse = (args) => {\n  const options = {};\n  for (const arg of args) {\n    if (arg === '--verbose') options.verbose = true;\n    else throw new Error(`unknown option '${arg}'`);\n  }\n  return options;\n};\n";

describe('run_independent_tests leaves the tests their own command line', () => {
  it('a jest suite whose tests parse process.argv passes, with per-test ids', async () => {
    const repo = project(
      {
        'package.json': JSON.stringify({ scripts: { test: 'jest' } }),
        'cli.js': PARSER,
        'cli.test.js':
          "const { parse } = require('./cli');\ntest('parses the command line', () => expect(parse(process.argv.slice(2))).toEqual({}));\n",
      },
      installedPackage('jest', JEST_VERSION),
    );
    expectRawPass(repo);
    const data = await run(repo);
    expect(data).toMatchObject({ status: 'passed', counts: { total: 1, passed: 1 } });
    expect(data.tests).toEqual([{ id: 'cli.test.js > parses the command line', status: 'passed' }]);
    expect(data.tests_source).toMatch(/jest JSON report/);
  }, 180_000);

  it('a jest run inside a chain (`jest && node check.js`), as commander ran it, passes', async () => {
    const repo = project(
      {
        'package.json': JSON.stringify({ scripts: { test: 'jest && node -e 0' } }),
        'cli.js': PARSER,
        'cli.test.js':
          "const { parse } = require('./cli');\ntest('parses', () => expect(parse(process.argv.slice(2))).toEqual({}));\n",
      },
      installedPackage('jest', JEST_VERSION),
    );
    expectRawPass(repo);
    const data = await run(repo);
    expect(data).toMatchObject({ status: 'passed', tests: [{ id: 'cli.test.js > parses' }] });
  }, 180_000);

  it('a mocha suite whose tests parse process.argv passes, with per-test ids', async () => {
    const repo = project(
      {
        'package.json': JSON.stringify({ scripts: { test: 'mocha' } }),
        'cli.js': PARSER,
        'test/cli.spec.js':
          "const assert = require('node:assert');\nconst { parse } = require('../cli');\nit('parses the command line', () => assert.deepStrictEqual(parse(process.argv.slice(2)), {}));\n",
      },
      installedPackage('mocha', MOCHA_VERSION),
    );
    expectRawPass(repo);
    const data = await run(repo);
    expect(data).toMatchObject({ status: 'passed', counts: { total: 1, passed: 1 } });
    expect(data.tests_source).toMatch(/mocha xunit report/);
  }, 180_000);
});

describe('run_independent_tests leaves the programs the tests start their own environment', () => {
  /** A node:test suite that runs a node program and compares what it prints, as commander's do. */
  const SPAWNING_SUITE = {
    'hello.js':
      'console.log(`hello ${process.argv[2]}`);\nconsole.log(JSON.stringify(process.env.NODE_OPTIONS ?? null));\n',
    'test/hello.test.js': [
      "const test = require('node:test');",
      "const assert = require('node:assert/strict');",
      "const { execFileSync } = require('node:child_process');",
      "test('prints what it prints raw', () => {",
      "  const out = execFileSync(process.execPath, ['hello.js', 'ada'], { encoding: 'utf8' });",
      "  assert.equal(out, 'hello ada\\nnull\\n');",
      '});',
      '',
    ].join('\n'),
  };

  it.each([
    ['node --test, run directly', 'node --test'],
    ['node --test behind npm test', 'node --test && node -e 0'],
  ])(
    '%s: the spawned program prints what it prints raw',
    async (_, script) => {
      const repo = project({
        'package.json': JSON.stringify({ scripts: { test: script } }),
        ...SPAWNING_SUITE,
      });
      expectRawPass(repo);
      const data = await run(repo);
      expect(data).toMatchObject({
        status: 'passed',
        tests: [{ id: 'prints what it prints raw', status: 'passed' }],
      });
    },
    180_000,
  );

  // Run directly, vitest's forks inherit the loaded-file recorder through NODE_OPTIONS too.
  it.each([
    ['behind npm test', 'vitest run && node -e 0'],
    ['run directly', 'vitest run'],
  ])(
    'vitest %s: the spawned program prints what it prints raw',
    async (_how, script) => {
      const repo = project(
        {
          'package.json': JSON.stringify({ type: 'module', scripts: { test: script } }),
          'hello.js': SPAWNING_SUITE['hello.js'],
          'hello.test.js': [
            "import { test, expect } from 'vitest';",
            "import { execFileSync } from 'node:child_process';",
            "test('prints what it prints raw', () => {",
            "  const out = execFileSync(process.execPath, ['hello.js', 'ada'], { encoding: 'utf8' });",
            "  expect(out).toBe('hello ada\\nnull\\n');",
            '});',
            '',
          ].join('\n'),
        },
        path.resolve('.'),
      );
      expectRawPass(repo);
      const data = await run(repo);
      expect(data).toMatchObject({
        status: 'passed',
        tests: [{ id: 'hello.test.js > prints what it prints raw', status: 'passed' }],
      });
    },
    180_000,
  );

  it('the node:assert guard still fails a test after which code replaced an assert member', async () => {
    const repo = project({
      'package.json': JSON.stringify({ scripts: { test: 'node --test' } }),
      'test/patch.test.js':
        "const test = require('node:test');\nconst assert = require('node:assert');\ntest('patches', () => { assert.equal = () => {}; });\n",
    });
    const data = await run(repo);
    expect(data.status).toBe('failed');
    expect(JSON.stringify(data.tests)).toMatch(/node:assert\.equal replaced/);
  }, 180_000);
});

describe('run_independent_tests runs the declared package manager on a machine without it', () => {
  it('pnpm, which corepack cannot serve: the declared release from npm, as pnpm runs it raw', async () => {
    const { version } = PACKAGE_MANAGERS.pnpm;
    const repo = project({
      'package.json': JSON.stringify({
        packageManager: `pnpm@${version}`,
        scripts: { lint: 'node -e 0', test: 'pnpm lint && node --test' },
      }),
      'pnpm-lock.yaml': "lockfileVersion: '9.0'\n\nimporters:\n\n  .: {}\n",
      'test/greet.test.js': "const test = require('node:test');\ntest('greets', () => {});\n",
    });
    const pnpm = packageManagerBinDirectory('pnpm');
    const rawPath = [pnpm, process.env.PATH].join(path.delimiter);
    const raw = spawnSync('pnpm', ['test'], {
      cwd: repo.dir,
      encoding: 'utf8',
      env: { ...process.env, PATH: rawPath },
    });
    expect(raw.status, raw.stderr).toBe(0);
    // coachgate's cache of package managers holding the release npm installs (no download here);
    // corepack's cache empty and its registry unreachable.
    const cache = mkdtempSync(path.join(os.tmpdir(), 'coachgate-cache-'));
    const corepack = mkdtempSync(path.join(os.tmpdir(), 'coachgate-corepack-'));
    cpSync(
      path.join(installedPackage('pnpm', version), 'node_modules', 'pnpm'),
      path.join(cache, 'coachgate', 'package-managers', `pnpm-${version}`, 'node_modules', 'pnpm'),
      { recursive: true },
    );
    const saved = { ...process.env };
    process.env.PATH = (process.env.PATH ?? '')
      .split(path.delimiter)
      .filter((directory) => !directory.endsWith('node_modules/.bin'))
      .join(path.delimiter);
    Object.assign(process.env, {
      XDG_CACHE_HOME: cache,
      COREPACK_HOME: corepack,
      COREPACK_NPM_REGISTRY: 'http://127.0.0.1:9/',
    });
    try {
      const data = await run(repo);
      expect(data).toMatchObject({
        command: ['pnpm', 'test'],
        status: 'passed',
        tests: [{ id: 'greets', status: 'passed' }],
      });
      expect(data.env.notes.join('\n')).toMatch(
        `runs pnpm@${version} as npm installed it from the registry`,
      );
    } finally {
      for (const name of ['PATH', 'XDG_CACHE_HOME', 'COREPACK_HOME', 'COREPACK_NPM_REGISTRY'])
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      rmSync(cache, { recursive: true, force: true });
      rmSync(corepack, { recursive: true, force: true });
    }
  }, 180_000);
});
