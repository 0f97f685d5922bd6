import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  nodeLoadedFlag,
  readNodeLoadedFiles,
  vitestLoadedFlag,
  writeNodeLoadedRecorder,
} from '../../src/runner/node-loaded-files.js';
import { nodeHarnessGuardFlag, writeHarnessGuards } from '../../src/runner/harness-guard.js';
import type { TestCommand } from '../../src/runner/detect.js';

/**
 * The recorder in real node processes: on Node 20 it reads V8's coverage at exit; the node-versions
 * CI step runs this file on 22 and 24 too, where `module.registerHooks` sees each load.
 */
let project: string;
let reports: string;
beforeEach(async () => {
  project = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'coachgate-loaded-')));
  reports = path.join(project, '.reports');
  mkdirSync(reports);
  await writeNodeLoadedRecorder(reports);
});
afterEach(() => rmSync(project, { recursive: true, force: true }));

function write(files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(project, name)), { recursive: true });
    writeFileSync(path.join(project, name), text);
  }
}
const run = (argv: string[]) =>
  execFileSync(argv[0], argv.slice(1), {
    cwd: project,
    env: { ...process.env, NODE_OPTIONS: nodeLoadedFlag(reports) },
    stdio: 'pipe',
  });
const inProject = (files: string[] | undefined) =>
  files?.map((file) => path.relative(project, file)).sort();

describe('the node loaded-file recorder', () => {
  it('lists what node --test children load: ES modules, a computed import, CommonJS', async () => {
    write({
      'package.json': '{"type": "module"}',
      'app/registry.js': "export const load = (name) => import('./plugins/' + name + '.js');\n",
      'app/plugins/upper.js': 'export const apply = (text) => text.toUpperCase();\n',
      'app/legacy.cjs': 'module.exports = 1;\n',
      'test/registry.test.js': [
        "import test from 'node:test';",
        "import { createRequire } from 'node:module';",
        "import { load } from '../app/registry.js';",
        "test('loads', async () => { await load('upper'); createRequire(import.meta.url)('../app/legacy.cjs'); });",
      ].join('\n'),
    });
    run([process.execPath, '--test']);
    expect(inProject(await readNodeLoadedFiles(reports, project))).toEqual([
      'app/legacy.cjs',
      'app/plugins/upper.js',
      'app/registry.js',
      'test/registry.test.js',
    ]);
  });

  it('lists an ES module the test no longer holds, after the collector has run', async () => {
    // Where it comes from V8's coverage at exit, a module's script must outlive every reference.
    write({
      'package.json': '{"type": "module"}',
      'app/constants.js': 'export const limit = 3;\n',
      'test/limit.test.js': [
        "import test from 'node:test';",
        "test('limit', async () => { await import('../app/constants.js'); for (let i = 0; i < 5; i += 1) gc(); });",
      ].join('\n'),
    });
    run([process.execPath, '--expose-gc', '--test']);
    expect(inProject(await readNodeLoadedFiles(reports, project))).toEqual([
      'app/constants.js',
      'test/limit.test.js',
    ]);
  });

  it('leaves out a source file a test reads as data', async () => {
    write({
      'package.json': '{"type": "module"}',
      'app/upper.js': 'export const upper = (text) => text.toUpperCase();\n',
      'app/unused.js': 'export const unused = 1;\n',
      'test/upper.test.js': [
        "import test from 'node:test';",
        "import { readFile } from 'node:fs/promises';",
        "import { upper } from '../app/upper.js';",
        "test('reads', async () => { upper(String(await readFile(new URL('../app/unused.js', import.meta.url)))); });",
      ].join('\n'),
    });
    run([process.execPath, '--test']);
    expect(inProject(await readNodeLoadedFiles(reports, project))).toEqual([
      'app/upper.js',
      'test/upper.test.js',
    ]);
  });

  // A source the product reads and runs itself is loaded as much as an import is; what the tests
  // read (an expected-value file) and what the product writes are not.
  it('lists the files the code reads, by any fs route, leaving out what only the tests read', async () => {
    write({
      'package.json': '{"type": "module"}',
      'app/registry.js': [
        "import fs from 'node:fs';",
        "import vm from 'node:vm';",
        'export function viaVm(name) {',
        "  const source = fs.readFileSync(new URL(`./plugins/${name}.js`, import.meta.url), 'utf8');",
        '  const scope = { exports: {} };',
        '  vm.runInNewContext(source, scope);',
        '  return scope.exports.apply;',
        '}',
        'export async function viaFunction(name) {',
        "  const source = await fs.promises.readFile(`app/plugins/${name}.js`, 'utf8');",
        '  const exports = {};',
        "  new Function('exports', source)(exports);",
        '  return exports.apply;',
        '}',
        'export const viaStream = (file) =>',
        "  new Promise((done) => fs.createReadStream(file).on('data', () => {}).on('close', done));",
        "export const save = (file) => fs.writeFileSync(file, 'out');",
      ].join('\n'),
      'app/plugins/upper.js': 'exports.apply = (text) => text.toUpperCase();\n',
      'app/plugins/lower.js': 'exports.apply = (text) => text.toLowerCase();\n',
      'app/settings.json': '{"size": 3}\n',
      'test/expected.json': '"AB"\n',
      'test/registry.test.js': [
        "import test from 'node:test';",
        "import { readFileSync } from 'node:fs';",
        "import { save, viaFunction, viaStream, viaVm } from '../app/registry.js';",
        "test('reads', async () => {",
        "  viaVm('upper');",
        "  await viaFunction('lower');",
        "  await viaStream('app/settings.json');",
        "  save('app/out.txt');",
        "  readFileSync('test/expected.json');",
        '});',
      ].join('\n'),
    });
    run([process.execPath, '--test']);
    expect(inProject(await readNodeLoadedFiles(reports, project))).toEqual([
      'app/plugins/lower.js',
      'app/plugins/upper.js',
      'app/registry.js',
      'app/settings.json',
      'test/registry.test.js',
    ]);
  });

  it('lists what an ES module a test requires imports, beside an import', async () => {
    write({
      'app/shout.mjs':
        "import { upper } from './upper.mjs';\nexport const shout = (t) => upper(t) + '!';\n",
      'app/upper.mjs': 'export const upper = (text) => text.toUpperCase();\n',
      'app/plain.mjs': 'export const plain = 1;\n',
      'test/shout.test.cjs': [
        "const test = require('node:test');",
        "const { shout } = require('../app/shout.mjs');",
        "test('shouts', async () => { shout('a'); await import('../app/plain.mjs'); });",
      ].join('\n'),
    });
    run([process.execPath, '--test']);
    expect(inProject(await readNodeLoadedFiles(reports, project))).toEqual([
      'app/plain.mjs',
      'app/shout.mjs',
      'app/upper.mjs',
      'test/shout.test.cjs',
    ]);
  });

  it('lists the ES modules a registered loader hook loads', async () => {
    // Hooks registered with module.register load on a thread of their own, unseen by a hook here.
    write({
      'package.json': '{"type": "module"}',
      'hooks/register.js':
        "import { register } from 'node:module';\nregister('./load.js', import.meta.url);\n",
      'hooks/load.js': 'export const load = (url, context, next) => next(url, context);\n',
      'app/upper.js': 'export const upper = (text) => text.toUpperCase();\n',
      'test/upper.test.js': [
        "import test from 'node:test';",
        "import { upper } from '../app/upper.js';",
        "test('upper', () => { upper('a'); });",
      ].join('\n'),
    });
    run([process.execPath, '--import', './hooks/register.js', '--test']);
    // The hooks module itself loads on their thread: named as module.register is called.
    expect(inProject(await readNodeLoadedFiles(reports, project))).toEqual(
      expect.arrayContaining(['app/upper.js', 'hooks/load.js', 'test/upper.test.js']),
    );
  });

  it('lists what mocha loads through its .bin link, leaving out node_modules', async () => {
    symlinkSync(path.resolve('node_modules'), path.join(project, 'node_modules'));
    write({
      'lib/shout.js': "exports.shout = (text) => require('./' + 'upper').upper(text) + '!';\n",
      'lib/upper.js': 'exports.upper = (text) => text.toUpperCase();\n',
      'test/shout.spec.js':
        "const { shout } = require('../lib/shout');\nit('shouts', () => shout('a'));\n",
    });
    run([path.join(project, 'node_modules/.bin/mocha')]);
    expect(inProject(await readNodeLoadedFiles(reports, project))).toEqual([
      'lib/shout.js',
      'lib/upper.js',
      'test/shout.spec.js',
    ]);
  });

  // jest compiles each module itself: in band (one file) and in its worker processes (two).
  it.each([1, 2])(
    'lists what jest compiles from %i test file(s), a computed require, leaving out node_modules',
    async (files) => {
      symlinkSync(path.resolve('node_modules'), path.join(project, 'node_modules'));
      const spec =
        "const { shout } = require('../lib/shout');\ntest('shouts', () => { shout('a'); });\n";
      write({
        'package.json': '{}',
        'lib/shout.js': "exports.shout = (text) => require('./' + 'upper').upper(text) + '!';\n",
        'lib/upper.js': 'exports.upper = (text) => text.toUpperCase();\n',
        ...Object.fromEntries(
          Array.from({ length: files }, (_, index) => [`test/shout${index}.test.js`, spec]),
        ),
      });
      run([path.join(project, 'node_modules/.bin/jest'), '--maxWorkers=2', '--no-cache']);
      expect(inProject(await readNodeLoadedFiles(reports, project))).toEqual([
        'lib/shout.js',
        'lib/upper.js',
        ...Array.from({ length: files }, (_, index) => `test/shout${index}.test.js`),
      ]);
    },
  );

  it("lists vitest's module graph: a computed import, leaving out node_modules and the reporter", async () => {
    symlinkSync(path.resolve('node_modules'), path.join(project, 'node_modules'));
    write({
      'package.json': '{"type": "module"}',
      'app/registry.js': "export const load = (name) => import('./plugins/' + name + '.js');\n",
      'app/plugins/upper.js': 'export const apply = (text) => text.toUpperCase();\n',
      'test/registry.test.js': [
        "import { expect, test } from 'vitest';",
        "import { load } from '../app/registry.js';",
        "test('loads', async () => expect((await load('upper')).apply('a')).toBe('A'));",
      ].join('\n'),
    });
    const vitest = path.join(project, 'node_modules/.bin/vitest');
    run([vitest, 'run', '--reporter=default', vitestLoadedFlag(reports)]);
    expect(inProject(await readNodeLoadedFiles(reports, project))).toEqual([
      'app/plugins/upper.js',
      'app/registry.js',
      'test/registry.test.js',
    ]);
  });

  it("lists what vitest's forks read and run, which its module graph never holds", async () => {
    symlinkSync(path.resolve('node_modules'), path.join(project, 'node_modules'));
    write({
      'package.json': '{"type": "module"}',
      'app/registry.js': [
        "import { readFileSync } from 'node:fs';",
        "import vm from 'node:vm';",
        'export function load(name) {',
        "  const source = readFileSync(new URL(`./plugins/${name}.js`, import.meta.url), 'utf8');",
        '  const scope = { exports: {} };',
        '  vm.runInNewContext(source, scope);',
        '  return scope.exports.apply;',
        '}',
      ].join('\n'),
      'app/plugins/upper.js': 'exports.apply = (text) => text.toUpperCase();\n',
      'test/registry.test.js': [
        "import { expect, test } from 'vitest';",
        "import { load } from '../app/registry.js';",
        "test('loads', () => expect(load('upper')('a')).toBe('A'));",
      ].join('\n'),
    });
    const vitest = path.join(project, 'node_modules/.bin/vitest');
    run([vitest, 'run', '--reporter=default', vitestLoadedFlag(reports)]);
    expect(inProject(await readNodeLoadedFiles(reports, project))).toEqual([
      'app/plugins/upper.js',
      'app/registry.js',
      'test/registry.test.js',
    ]);
  });

  it('stays silent in the run’s other node programs', async () => {
    write({ 'build.js': "require('./lib.js');\n", 'lib.js': '' });
    run([process.execPath, 'build.js']);
    expect(await readNodeLoadedFiles(reports, project)).toBeUndefined();
  });

  // Preloaded with --require, beside the harness guard: on Node 20 an --import would send every
  // main module through the ES module loader, which refuses a file named .ts (commander's suite
  // spawns one).
  it('leaves a program named .ts to run as node runs it, with the harness guard beside it', async () => {
    await writeHarnessGuards({ runner: 'npm' } as TestCommand, reports);
    write({ 'bin/try.ts': "console.log('ran');\n" });
    const output = execFileSync(process.execPath, ['bin/try.ts'], {
      cwd: project,
      env: {
        ...process.env,
        NODE_OPTIONS: `${nodeHarnessGuardFlag(reports)} ${nodeLoadedFlag(reports)}`,
      },
      encoding: 'utf8',
    });
    expect(output).toBe('ran\n');
  });
});
