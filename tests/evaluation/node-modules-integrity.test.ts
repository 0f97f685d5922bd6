import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import { BASE_LIB, BROKEN_LIB, GOOD_LIB, shoutTaskFile } from '../helpers/node-task.js';
import { CHAI_VERSION as CHAI, installedPackage, MS_VERSION as MS } from '../helpers/runners.js';
import { nodeModulesProblems } from '../../src/evaluation/node-modules-integrity.js';
import { initKey } from '../../src/records/keys.js';
import { taskStateDirectory } from '../../src/records/state-directory.js';
import { filesHashed } from '../../src/repo/file-digest.js';
import { nodeModulesContent } from '../../src/repo/node-modules.js';
import { networkEnv } from '../helpers/network.js';

/** A package with a command and no dependencies, for the `.bin` shims. */
const SEMVER = '7.7.2';

/**
 * The borrowed node_modules verified by content (issue 28, items 3 and 4): real `npm ci` of chai
 * from its real lockfile in a temp repository, the task's base pinned with node_modules installed,
 * and the Player editing the assertion library in place or planting a runner binary, through the
 * MCP client.
 */
const TASK = 'TASK-028';
const TASK_FILE = shoutTaskFile(TASK);
const chaiTest = (body: string) =>
  `import chai from 'chai';\nimport test from 'node:test';\nimport * as lib from '../src/lib.js';\n\nconst { expect } = chai;\n\n${body}\n`;
const BASE_TEST = chaiTest(
  "test('greets by name', () => expect(lib.greet('Ada')).to.equal('Hello, Ada!'));",
);
const SHOUT_TEST = chaiTest("test('shouts', () => expect(lib.shout('hi')).to.equal('HI!'));");
const CHAI_ASSERTIONS = 'node_modules/chai/lib/chai/core/assertions.js';

let repo: TempRepo | undefined;
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  repo?.remove();
  repo = undefined;
  close = undefined;
});

const npm = (dir: string, ...args: string[]) =>
  execFileSync('npm', [...args, '--prefer-offline', '--no-audit', '--no-fund'], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...networkEnv(), npm_config_update_notifier: 'false' },
  });

/**
 * A node --test project whose base test asserts with chai, installed by `npm ci` from chai's real
 * lockfile before the task's base is pinned; on the task branch with the Player's `lib` written.
 */
async function chaiProject(lib: string, beforePin: () => void = () => undefined) {
  const installed = installedPackage('chai', CHAI);
  installedPackage('ms', MS); // in npm's cache, for the Player's offline npm install
  const manifest = {
    name: 'shop',
    version: '1.0.0',
    type: 'module',
    scripts: { test: 'node --test' },
    dependencies: { chai: CHAI },
  };
  repo = makeRepo({
    'package.json': JSON.stringify(manifest, null, 2),
    '.gitignore': 'node_modules/\n',
    'src/lib.js': BASE_LIB,
    'test/lib.test.js': BASE_TEST,
    [`.guardkit/tasks/backlog/${TASK}.md`]: TASK_FILE,
  });
  copyFileSync(path.join(installed, 'package-lock.json'), path.join(repo.dir, 'package-lock.json'));
  npm(repo.dir, 'ci');
  repo.commit('lockfile');
  repo.git('checkout', '-q', '-b', `autobuild/${TASK}`);
  repo.write('src/lib.js', lib);
  repo.write('test/shout.test.js', SHOUT_TEST);
  beforePin();
  const connection = await connect({ roots: [repo.dir] });
  close = connection.close;
  const call = (name: string, args: Record<string, unknown>) =>
    callTool(connection.client, name, { worktree: repo!.dir, task_id: TASK, ...args });
  // The first call pins the base, and node_modules as it is now.
  await call('record_player_report', {
    turn: 1,
    report: {
      files_modified: ['src/lib.js', 'test/shout.test.js'],
      tests_written: ['test/shout.test.js'],
      tests_passed: true,
      requirements_addressed: ['AC-001'],
    },
  });
  return async (acknowledgements: Record<string, unknown> = {}) => {
    const run = dataOf(await call('run_independent_tests', {}));
    const result = await call('record_verdict', {
      turn: 1,
      decision: 'approve',
      rationale: 'done',
      evidence: [{ criterion: 'AC-001', test: 'shouts' }],
      ...acknowledgements,
    });
    return { run, result, text: textOf(result) };
  };
}

/**
 * Edits chai's strict equality so that only the regressing greet()'s failure is swallowed: every
 * other assertion still holds. Returns the file as npm installed it.
 */
function swallowRegression(dir: string): string {
  const file = path.join(dir, CHAI_ASSERTIONS);
  const original = readFileSync(file, 'utf8');
  const swallowing = original.replace(
    '          val === obj\n',
    "          (val === obj || String(obj).startsWith('Hi '))\n",
  );
  expect(swallowing).not.toBe(original);
  writeFileSync(file, swallowing);
  return original;
}

/** Files babel-loader and vitest write into node_modules during ordinary runs. */
function writeToolCaches(dir: string, text: string) {
  for (const file of ['.cache/babel-loader/x.json', '.vite/vitest/results.json']) {
    mkdirSync(path.dirname(path.join(dir, 'node_modules', file)), { recursive: true });
    writeFileSync(path.join(dir, 'node_modules', file), text);
  }
}

/** The shell shim pnpm (its cmd-shim) writes for a command running `target`, node on PATH. */
function pnpmShimText(nodePath: string, target: string): string {
  return `#!/bin/sh
basedir=$(dirname "$(echo "$0" | sed -e 's,\\\\,/,g')")

case \`uname\` in
    *CYGWIN*|*MINGW*|*MSYS*)
        if command -v cygpath > /dev/null 2>&1; then
            basedir=\`cygpath -w "$basedir"\`
        fi
    ;;
esac

if [ -z "$NODE_PATH" ]; then
  export NODE_PATH="${nodePath}/.pnpm/node_modules"
else
  export NODE_PATH="${nodePath}/.pnpm/node_modules:$NODE_PATH"
fi
if [ -x "$basedir/node" ]; then
  exec "$basedir/node"  "$basedir/${target}" "$@"
else
  exec node  "$basedir/${target}" "$@"
fi
`;
}

/** The yarn.lock (v1) yarn would write for the tree npm installed (or one with `integrity`). */
function yarnLockOf(dir: string, integrity?: string): string {
  const hidden = path.join(dir, 'node_modules/.package-lock.json');
  const lock = JSON.parse(readFileSync(hidden, 'utf8')) as {
    packages: Record<string, { version?: string; resolved?: string; integrity?: string }>;
  };
  const entries = Object.entries(lock.packages)
    .filter(([place]) => place.startsWith('node_modules/'))
    .map(([place, entry]) => {
      const name = place.slice(place.lastIndexOf('node_modules/') + 'node_modules/'.length);
      return `"${name}@^${entry.version}":\n  version "${entry.version}"\n  resolved "${entry.resolved}"\n  integrity ${integrity ?? entry.integrity}\n`;
    });
  return `# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.\n# yarn lockfile v1\n\n\n${entries.join('\n')}`;
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

describe('node_modules verified by content against the pinned base and package-lock.json', () => {
  it('refuses chai edited in place to swallow the regression, naming the file; approves it restored', async () => {
    const approve = await chaiProject(BROKEN_LIB);
    // The pin, out of the Player's reach, recorded node_modules by content.
    const state = await taskStateDirectory(repo!.dir, TASK);
    const pin = JSON.parse(readFileSync(path.join(state, 'pinned-base.json'), 'utf8'));
    const recorded = JSON.parse(readFileSync(path.join(state, 'pinned-node-modules.json'), 'utf8'));
    expect(pin.node_modules.files).toBe(Object.keys(recorded).length);
    expect(recorded).toHaveProperty([CHAI_ASSERTIONS]);
    const original = swallowRegression(repo!.dir);

    const refused = await approve();
    expect(refused.run.status).toBe('passed'); // the edited library fooled the Player's own run
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(
      new RegExp(
        `planted environment: ${escaped(CHAI_ASSERTIONS)} — a file of chai@${CHAI} that differs from its published tarball \\(edited after install\\).*Restore it \\(npm ci\\)`,
      ),
    );

    writeFileSync(path.join(repo!.dir, CHAI_ASSERTIONS), original);
    repo!.write('src/lib.js', GOOD_LIB);
    const honest = await approve();
    expect(honest.result.isError, honest.text).toBeFalsy();
  }, 240_000);

  it('refuses a runner binary planted as a package of its own (in no lockfile, not at the pin)', async () => {
    const approve = await chaiProject(BROKEN_LIB);
    // `node --test` finds node_modules/.bin first on PATH: a fake `node` that reports every test
    // passed.
    const planted = path.join(repo!.dir, 'node_modules/fast-node');
    mkdirSync(planted);
    writeFileSync(
      path.join(planted, 'package.json'),
      JSON.stringify({ name: 'fast-node', version: '1.0.0', bin: { node: 'cli.sh' } }),
    );
    writeFileSync(
      path.join(planted, 'cli.sh'),
      '#!/bin/sh\necho "TAP version 13"\necho "# pass 2"\n',
    );
    chmodSync(path.join(planted, 'cli.sh'), 0o755);
    mkdirSync(path.join(repo!.dir, 'node_modules/.bin'), { recursive: true });
    symlinkSync('../fast-node/cli.sh', path.join(repo!.dir, 'node_modules/.bin/node'));

    const refused = await approve();
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(
      /planted environment: node_modules\/\.bin\/node — a runner binary from node_modules\/fast-node, a package neither installed when the base was pinned nor listed by package-lock\.json/,
    );
    expect(refused.text).toMatch(
      /node_modules\/fast-node\/package\.json — an installed package \(fast-node@1\.0\.0\) that package-lock\.json does not list/,
    );
  }, 240_000);

  it("refuses when the pin's node_modules record was rewritten (emptied to match an edited tree)", async () => {
    const approve = await chaiProject(GOOD_LIB);
    const state = await taskStateDirectory(repo!.dir, TASK);
    writeFileSync(path.join(state, 'pinned-node-modules.json'), '{}');
    const refused = await approve();
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(
      /planted environment: node_modules — The pinned node_modules record .* is missing or altered; re-pin with coachgate task pin-base/,
    );
  }, 240_000);

  it('approves an honest turn whose new dependency the Player installed with npm install', async () => {
    const approve = await chaiProject(GOOD_LIB);
    // The Player's shout() uses a new dependency, added to package.json and installed by npm.
    npm(repo!.dir, 'install', '--save-exact', `ms@${MS}`);
    repo!.write(
      'src/lib.js',
      `import ms from 'ms';\n\n${GOOD_LIB}\nexport const second = () => ms('1s');\n`,
    );
    const approved = await approve();
    expect(approved.result.isError, approved.text).toBeFalsy();
    expect(dataOf(approved.result).evaluation.trusted.status).toBe('passed');
  }, 240_000);
});

describe('verification of an unchanged node_modules', () => {
  it('is answered from the digest cache, tool caches left out; one edited file is hashed and named alone', async () => {
    repo = makeRepo({});
    const installed = installedPackage('chai', CHAI);
    for (const file of ['package.json', 'package-lock.json'])
      copyFileSync(path.join(installed, file), path.join(repo.dir, file));
    npm(repo.dir, 'ci');
    writeToolCaches(repo.dir, '{}');
    const pinned = await nodeModulesContent(repo.dir);
    const files = Object.keys(pinned!).length;
    expect(files).toBeGreaterThan(50);

    // What tools rewrite there during honest runs and builds is out of scope.
    writeToolCaches(repo.dir, '{"rewritten":true}');
    const before = filesHashed();
    expect(await nodeModulesProblems(repo.dir, pinned)).toEqual({ planted: [], unverified: [] });
    expect(filesHashed() - before).toBe(0); // every digest from the cache

    const file = path.join(repo.dir, CHAI_ASSERTIONS);
    writeFileSync(file, `${readFileSync(file, 'utf8')}\n// edited\n`);
    const again = filesHashed();
    const found = (await nodeModulesProblems(repo.dir, pinned)).planted;
    expect(filesHashed() - again).toBe(1);
    expect(found.map((item) => item.file)).toEqual([CHAI_ASSERTIONS]);
  }, 240_000);
});

describe('node_modules verified against the tarballs its registry published (npm cache, offline)', () => {
  it('refuses chai edited before the base was pinned, naming the package and the file', async () => {
    // The pin records the edited tree: only the published tarball shows the edit.
    const approve = await chaiProject(BROKEN_LIB, () => swallowRegression(repo!.dir));
    const refused = await approve();
    expect(refused.run.status).toBe('passed'); // the edited library fooled the Player's own run
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(
      new RegExp(
        `planted environment: ${escaped(CHAI_ASSERTIONS)} — a file of chai@${CHAI} that differs from its published tarball`,
      ),
    );
    expect(refused.text).not.toMatch(/since the base was pinned/);
  }, 240_000);

  it("says the environment is unverified when npm's cache holds no tarball, approved once acknowledged", async () => {
    // A server that never read these tarballs (its state keeps the listings it read) and an npm
    // cache without them: installed elsewhere, or the cache was cleaned.
    const scratch = mkdtempSync(path.join(os.tmpdir(), 'coachgate-unverified-'));
    const before = { ...process.env };
    process.env.COACHGATE_STATE_DIR = path.join(scratch, 'state');
    try {
      await initKey();
      const approve = await chaiProject(GOOD_LIB);
      process.env.npm_config_cache = path.join(scratch, 'npm-cache');
      const refused = await approve();
      expect(refused.result.isError).toBe(true);
      expect(refused.text).toMatch(
        /environment unverified: .*node_modules\/[\w-]+ \(npm's cache holds no tarball under its integrity/,
      );
      expect(refused.text).not.toMatch(/planted environment/);
      const acknowledgement = { reason: 'npm ci from the lockfile, cache cleaned' };
      const approved = await approve({ acknowledged_unverified_environment: acknowledgement });
      expect(approved.result.isError, approved.text).toBeFalsy();
      // Recorded with the verdict, for whoever reads the approval later.
      const turn = JSON.parse(
        readFileSync(path.join(repo!.dir, dataOf(approved.result).path), 'utf8'),
      );
      expect(turn.acknowledged_unverified_environment).toEqual(acknowledgement);
    } finally {
      process.env.COACHGATE_STATE_DIR = before.COACHGATE_STATE_DIR;
      if (before.npm_config_cache === undefined) delete process.env.npm_config_cache;
      else process.env.npm_config_cache = before.npm_config_cache;
      rmSync(scratch, { recursive: true, force: true });
    }
  }, 240_000);

  it('verifies a yarn 1 install by the integrity yarn.lock gives; an edited package is planted', async () => {
    repo = makeRepo({});
    const installed = installedPackage('chai', CHAI);
    copyFileSync(path.join(installed, 'package.json'), path.join(repo.dir, 'package.json'));
    copyFileSync(
      path.join(installed, 'package-lock.json'),
      path.join(repo.dir, 'package-lock.json'),
    );
    npm(repo.dir, 'ci');
    rmSync(path.join(repo.dir, 'package-lock.json'));
    // An old yarn.lock (sha1 only) binds nothing: npm's record of its install is read instead.
    writeFileSync(path.join(repo.dir, 'yarn.lock'), yarnLockOf(repo.dir, 'sha1-AAAA'));
    const old = repo.commit('old yarn.lock');
    expect(await nodeModulesProblems(repo.dir, undefined, old)).toEqual({
      planted: [],
      unverified: [],
    });
    // The tree yarn 1 leaves: its yarn.lock, no npm lock anywhere.
    writeFileSync(path.join(repo.dir, 'yarn.lock'), yarnLockOf(repo.dir));
    rmSync(path.join(repo.dir, 'node_modules/.package-lock.json'));
    const base = repo.commit('yarn.lock');
    expect(await nodeModulesProblems(repo.dir, undefined, base)).toEqual({
      planted: [],
      unverified: [],
    });

    swallowRegression(repo.dir);
    writeFileSync(path.join(repo.dir, 'node_modules/deep-eql/extra.js'), 'module.exports = 1;\n');
    const found = await nodeModulesProblems(repo.dir, undefined, base);
    expect(found.planted.map((item) => item.file).sort()).toEqual([
      CHAI_ASSERTIONS,
      'node_modules/deep-eql/extra.js',
    ]);
    expect(found.unverified).toEqual([]);

    // The worktree's yarn.lock is the Player's: it cannot move a package the base locks.
    const edited = readFileSync(path.join(repo.dir, 'yarn.lock'), 'utf8').replace(
      /(\nchai@[^\n]*\n(?: {2}.*\n)*? {2}integrity )\S+/,
      '$1sha512-forged',
    );
    writeFileSync(path.join(repo.dir, 'yarn.lock'), edited);
    const again = await nodeModulesProblems(repo.dir, undefined, base);
    expect(again.planted.map((item) => item.file)).toContain(CHAI_ASSERTIONS);
  }, 240_000);

  it("accepts the shell shim pnpm writes for a package's command; a shim that runs anything else is planted", async () => {
    repo = makeRepo({});
    const installed = installedPackage('semver', SEMVER);
    for (const file of ['package.json', 'package-lock.json'])
      copyFileSync(path.join(installed, file), path.join(repo.dir, file));
    npm(repo.dir, 'ci');
    const base = repo.commit('lockfile');
    const bin = path.join(repo.dir, 'node_modules/.bin/semver');
    const modules = path.join(repo.dir, 'node_modules');
    const planted = async (text: string) => {
      rmSync(bin, { force: true });
      writeFileSync(bin, text);
      chmodSync(bin, 0o755);
      return (await nodeModulesProblems(repo!.dir, undefined, base)).planted;
    };
    expect(await planted(pnpmShimText(modules, '../semver/bin/semver.js'))).toEqual([]);

    const variants = [
      pnpmShimText(modules, '../semver/index.js'), // another file of the package
      pnpmShimText(modules, '../../evil.js'), // a file outside every package
      pnpmShimText(os.tmpdir(), '../semver/bin/semver.js'), // NODE_PATH outside the tree
      pnpmShimText(modules, '../semver/bin/semver.js').replace(
        'exec node  ',
        'exec node  --require "$basedir/../../evil.js" ',
      ),
    ];
    for (const text of variants)
      expect((await planted(text)).map((item) => item.file)).toEqual(['node_modules/.bin/semver']);
  }, 240_000);

  it("names a file added to a package and one swapped for a link; the worktree's lock cannot point at a forged tarball", async () => {
    repo = makeRepo({});
    const installed = installedPackage('chai', CHAI);
    for (const file of ['package.json', 'package-lock.json'])
      copyFileSync(path.join(installed, file), path.join(repo.dir, file));
    npm(repo.dir, 'ci');
    const base = repo.commit('lockfile');
    const modules = path.join(repo.dir, 'node_modules');
    expect(await nodeModulesProblems(repo.dir, undefined, base)).toEqual({
      planted: [],
      unverified: [],
    });

    writeFileSync(path.join(modules, 'chai/lib/chai/utils/extra.js'), 'module.exports = 1;\n');
    rmSync(path.join(modules, 'deep-eql/index.js'));
    symlinkSync(path.join(repo.dir, 'eql.js'), path.join(modules, 'deep-eql/index.js'));
    const found = (await nodeModulesProblems(repo.dir, undefined, base)).planted;
    expect(found.map((item) => [item.file, item.problem.split(':')[0]])).toEqual([
      [
        'node_modules/chai/lib/chai/utils/extra.js',
        `a file inside chai@${CHAI} that its published tarball does not hold`,
      ],
      [
        'node_modules/deep-eql/index.js',
        expect.stringMatching(
          /^a link inside deep-eql@[\d.]+, whose published tarball holds no links/,
        ),
      ],
    ]);

    // A tarball of the edited chai, put in npm's cache under its own sha512 and named by the
    // worktree's lock: the base's lock still names the published one.
    const cache = mkdtempSync(path.join(os.tmpdir(), 'coachgate-npm-cache-'));
    const packed = mkdtempSync(path.join(os.tmpdir(), 'coachgate-packed-'));
    try {
      swallowRegression(repo.dir);
      const tarballs = Object.entries({ published: `chai@${CHAI}`, forged: `${modules}/chai` }).map(
        ([name, spec]) => {
          mkdirSync(path.join(packed, name));
          npm(path.join(packed, name), 'pack', spec, '--ignore-scripts');
          const [file] = readdirSync(path.join(packed, name));
          npm(packed, 'cache', 'add', path.join(packed, name, file!), '--cache', cache);
          return path.join(packed, name, file!);
        },
      );
      const forged = tarballs[1]!;
      const lock = JSON.parse(readFileSync(path.join(repo.dir, 'package-lock.json'), 'utf8'));
      lock.packages['node_modules/chai'].integrity =
        `sha512-${createHash('sha512').update(readFileSync(forged)).digest('base64')}`;
      writeFileSync(path.join(repo.dir, 'package-lock.json'), JSON.stringify(lock, null, 2));
      process.env.npm_config_cache = cache;
      const forgery = (await nodeModulesProblems(repo.dir, undefined, base)).planted;
      expect(forgery.map((item) => item.file)).toContain(CHAI_ASSERTIONS);
    } finally {
      delete process.env.npm_config_cache;
      rmSync(cache, { recursive: true, force: true });
      rmSync(packed, { recursive: true, force: true });
    }
  }, 240_000);
});
