import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { repositoryStateDirectory, stateRoot } from '../../src/records/state-directory.js';
import { BASE_FILE_TIME, LAID_FILE_TIME } from '../../src/evaluation/snapshot.js';
import { withBytecodeCache, type BytecodeCacheUse } from '../../src/runner/bytecode-cache.js';
import type { BytecodeCache } from '../../src/runner/bytecode-cache-types.js';
import type { TestCommand } from '../../src/runner/detect.js';
import { projectEnvironment } from '../../src/runner/environment.js';
import { OutputCapture } from '../../src/runner/output-capture.js';
import { runSandboxed } from '../../src/sandbox/run.js';
import { bwrapUsable } from '../helpers/bubblewrap.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';

/**
 * The base's bytecode cache (src/runner/bytecode-cache.ts): who may write it, when it is published,
 * which runs are given it. Real directories, real bubblewrap runs.
 */
const PYTEST: TestCommand = {
  argv: ['pytest'],
  detected_by: 'test',
  runner: 'pytest',
  report: 'text',
};
const NODE: TestCommand = { ...PYTEST, argv: ['node', '--test'], runner: 'node-test' };

const repos: TempRepo[] = [];
afterEach(() => repos.splice(0).forEach((repo) => repo.remove()));
function repository(files: Record<string, string> = {}): TempRepo {
  const repo = makeRepo({ 'test_a.py': 'def test_a():\n    pass\n', ...files });
  repos.push(repo);
  return repo;
}

const ended = { timed_out: false, cancelled: false };

async function keyFor(repo: TempRepo, command = PYTEST) {
  const environment = await projectEnvironment(repo.dir, process.env, { pyenv: null });
  return { baseCommit: repo.git('rev-parse', 'HEAD').trim(), command, environment, cwd: repo.dir };
}

async function published(repo: TempRepo): Promise<string[]> {
  const root = path.join(await repositoryStateDirectory(repo.dir), 'bytecode');
  return existsSync(root) ? readdirSync(root) : [];
}

/** What a run was given, and the cache it saw, as the callback receives them. */
async function given(
  repo: TempRepo,
  use: BytecodeCacheUse,
  key?: Awaited<ReturnType<typeof keyFor>>,
) {
  let seen: BytecodeCache | undefined;
  await withBytecodeCache(repo.dir, key ?? (await keyFor(repo)), use, async (cache) => {
    seen = cache;
    if (cache?.writable) writeFileSync(path.join(cache.directory, 'x.pyc'), 'bytecode');
    return ended;
  });
  return seen;
}

describe('which runs are given the cache, and when it is published', () => {
  it('publishes the baseline’s cache once it ended, then hands it to the other runs read-only', async () => {
    const repo = repository();
    expect(await given(repo, 'worktree')).toBeUndefined();
    const filling = await given(repo, 'fill');
    expect(filling?.writable).toBe(true);
    // Filled out of sight, published whole under its key.
    expect(existsSync(filling!.directory)).toBe(false);
    const [entry, ...more] = await published(repo);
    expect(more).toEqual([]);
    const read = await given(repo, 'worktree');
    expect(read).toMatchObject({ writable: false });
    expect(read!.revealed.map((directory) => path.basename(directory))).toEqual([entry]);
    expect(readFileSync(path.join(read!.directory, 'x.pyc'), 'utf8')).toBe('bytecode');
  });

  it('discards the cache of a baseline that timed out or was stopped', async () => {
    const repo = repository();
    await withBytecodeCache(repo.dir, await keyFor(repo), 'fill', async () => ({
      timed_out: true,
      cancelled: false,
    }));
    expect(await published(repo)).toEqual([]);
    expect(await given(repo, 'worktree')).toBeUndefined();
  });

  it('keeps the first of two baselines that publish the same key', async () => {
    const repo = repository();
    await given(repo, 'fill');
    const [first] = await published(repo);
    const second = await given(repo, 'fill');
    expect(await published(repo)).toEqual([first]);
    expect(existsSync(second!.revealed[0]!)).toBe(false);
  });

  it('keeps the four most recently used caches, and removes a filling one a killed server left', async () => {
    const repo = repository();
    const base = await keyFor(repo);
    const ofBase = (n: number) => ({ ...base, baseCommit: String(n).repeat(40) });
    const daysAgo = (days: number) => new Date(Date.now() - days * 24 * 60 * 60 * 1000);
    const caches = new Map<number, string>();
    for (const n of [1, 2, 3, 4]) {
      await given(repo, 'fill', ofBase(n));
      caches.set(n, (await given(repo, 'worktree', ofBase(n)))!.revealed[0]!);
    }
    // Base 1 was used longest ago, then 2, 3, 4; base 1 is read again, so 2 is the oldest now.
    for (const [n, directory] of caches) utimesSync(directory, daysAgo(5 - n), daysAgo(5 - n));
    await given(repo, 'worktree', ofBase(1));
    const root = path.dirname(caches.get(1)!);
    const abandoned = path.join(root, 'filling-left-by-a-killed-server');
    const underWay = path.join(root, 'filling-of-a-run-under-way');
    mkdirSync(abandoned);
    mkdirSync(underWay);
    utimesSync(abandoned, daysAgo(2), daysAgo(2));

    await given(repo, 'fill', ofBase(5));
    const left = await published(repo);
    expect(left).not.toContain(path.basename(caches.get(2)!));
    for (const n of [1, 3, 4]) expect(left).toContain(path.basename(caches.get(n)!));
    expect(left).toContain(path.basename(underWay));
    expect(left).not.toContain(path.basename(abandoned));
    expect(left).toHaveLength(5);
  });

  it('gives none to the Player’s run in a virtualenv project, nor to other runners; keeps nothing a virtualenv baseline wrote', async () => {
    const repo = repository();
    mkdirSync(path.join(repo.dir, '.venv/bin'), { recursive: true });
    writeFileSync(path.join(repo.dir, '.venv/bin/python'), '');
    const venv = await keyFor(repo);
    expect(venv.environment.interpreter).toBeDefined();
    // Its baseline writes, but what it wrote names no module: nothing is compiled or published.
    expect(await given(repo, 'fill', venv)).toMatchObject({ writable: true });
    expect(await given(repo, 'worktree', venv)).toBeUndefined();
    const other = repository();
    expect(await given(other, 'fill', await keyFor(other, NODE))).toBeUndefined();
    expect(await published(repo)).toEqual([]);
    expect(await published(other)).toEqual([]);
  });

  it('gives a snapshot run with no cache to read an empty read-only one, gone after the run', async () => {
    const repo = repository();
    mkdirSync(path.join(repo.dir, '.venv/bin'), { recursive: true });
    writeFileSync(path.join(repo.dir, '.venv/bin/python'), '');
    const other = repository();
    // Before any baseline published (any project), and in a project with its own virtualenv.
    for (const [where, key] of [
      [other, await keyFor(other)],
      [repo, await keyFor(repo)],
    ] as const) {
      let listed: string[] | undefined;
      const empty = await withBytecodeCache(where.dir, key, 'snapshot', async (cache) => {
        listed = readdirSync(cache!.directory);
        return { ...ended, cache };
      });
      expect(empty.cache).toMatchObject({ writable: false, revealed: [empty.cache!.directory] });
      expect(listed).toEqual([]);
      expect(existsSync(empty.cache!.directory)).toBe(false);
    }
  });

  it('is one cache for the worktree and the snapshots of one base', async () => {
    const repo = repository();
    // A snapshot elsewhere, with its own directory's tools first on PATH, as a worktree's.
    const snapshot = repository();
    const base = await keyFor(repo);
    const inSnapshot = (dir: string) => ({
      ...base,
      cwd: dir,
      environment: {
        ...base.environment,
        env: { ...base.environment.env, PATH: `${dir}/node_modules/.bin:/usr/bin` },
      },
    });
    await given(repo, 'fill', inSnapshot(repo.dir));
    expect(await given(repo, 'snapshot', inSnapshot(snapshot.dir))).toMatchObject({
      writable: false,
    });
    expect(await given(repo, 'worktree', { ...base, baseCommit: '0'.repeat(40) })).toBeUndefined();
  });
});

describe.skipIf(!bwrapUsable)('the cache inside the sandbox (needs a usable bwrap)', () => {
  /** A shell script run under bubblewrap with `cache`, and what it printed. */
  async function inSandbox(script: string, cache?: BytecodeCache, cwd = repository().dir) {
    const log = path.join(cwd, 'run.log');
    const capture = await OutputCapture.open(log);
    const outcome = await runSandboxed(
      {
        argv: ['sh', '-c', script],
        cwd,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '/',
          PYTHONDONTWRITEBYTECODE: '1',
        },
        timeoutMs: 30_000,
        isolation: { policy: { mode: 'required', network: 'none' }, bytecodeCache: cache },
      },
      capture,
    );
    await capture.close();
    return { outcome, output: readFileSync(log, 'utf8') };
  }

  it('a run reads the cache but cannot write it; only the filling run writes, and may write bytecode', async () => {
    const directory = path.join(stateRoot(), 'repos', 'r', 'bytecode', 'k');
    mkdirSync(directory, { recursive: true });
    writeFileSync(path.join(directory, 'kept.pyc'), 'base bytecode');
    // The rest of the state directory stays hidden around it.
    writeFileSync(path.join(stateRoot(), 'secret.txt'), 'server only');
    const script = [
      'cat "$PYTHONPYCACHEPREFIX/kept.pyc"; echo',
      'echo forged > "$PYTHONPYCACHEPREFIX/planted.pyc" && echo planted',
      'echo "dont-write=${PYTHONDONTWRITEBYTECODE:-unset}"',
      `cat ${path.join(stateRoot(), 'secret.txt')} || echo secret hidden`,
    ].join('; ');

    const read = await inSandbox(script, { directory, writable: false, revealed: [directory] });
    expect(read.outcome.sandbox.backend).toBe('bubblewrap');
    expect(read.output).toContain('base bytecode');
    expect(read.output).not.toMatch(/^planted$/m);
    expect(read.output).toContain('dont-write=1');
    expect(read.output).toContain('secret hidden');
    expect(existsSync(path.join(directory, 'planted.pyc'))).toBe(false);

    const fill = await inSandbox(script, { directory, writable: true, revealed: [directory] });
    expect(fill.output).toMatch(/^planted$/m);
    expect(fill.output).toContain('dont-write=unset');
    expect(fill.output).toContain('secret hidden');
    expect(existsSync(path.join(directory, 'planted.pyc'))).toBe(true);
  });

  it('a snapshot’s run reads the bytecode of the base’s files under its own path; laid files and the worktree’s run never do', async () => {
    // The baseline's tree, a snapshot of the same base elsewhere, and the Player's worktree; one
    // repository's cache. Both versions of the module are the same size.
    const [baseline, snapshot, worktree] = [repository(), repository(), repository()];
    const write = (dir: string, value: number, time: Date) => {
      const file = path.join(dir, 'mod.py');
      writeFileSync(file, `VALUE = ${value}\n`);
      utimesSync(file, time, time);
    };
    const importing = async (dir: string, use: BytecodeCacheUse) => {
      const key = { ...(await keyFor(baseline)), cwd: dir };
      let output = '';
      await withBytecodeCache(baseline.dir, key, use, async (cache) => {
        const run = await inSandbox('python3 -c "import mod; print(mod.VALUE)"', cache, dir);
        output = run.output.trim();
        return ended;
      });
      return output;
    };
    write(baseline.dir, 1, BASE_FILE_TIME);
    expect(await importing(baseline.dir, 'fill')).toBe('1');

    // A file with the base file's time and size is taken for the base's file: what the snapshot
    // writer's two times are for.
    write(snapshot.dir, 2, BASE_FILE_TIME);
    expect(await importing(snapshot.dir, 'snapshot')).toBe('1');
    write(snapshot.dir, 2, LAID_FILE_TIME);
    expect(await importing(snapshot.dir, 'snapshot')).toBe('2');
    write(worktree.dir, 2, BASE_FILE_TIME);
    expect(await importing(worktree.dir, 'worktree')).toBe('2');
    // Each snapshot run's view of the cache is gone with the run.
    expect((await published(baseline)).filter((entry) => entry.startsWith('view-'))).toEqual([]);
  });

  it('a virtualenv project’s baseline: nothing it wrote is read, coachgate’s checked-hash compilation of what it imported is', async () => {
    const [baseline, snapshot] = [repository(), repository()];
    const python = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], {
      encoding: 'utf8',
    }).trim();
    for (const repo of [baseline, snapshot]) {
      mkdirSync(path.join(repo.dir, '.venv/bin'), { recursive: true });
      symlinkSync(python, path.join(repo.dir, '.venv/bin/python'));
      for (const name of ['mod', 'other']) {
        writeFileSync(path.join(repo.dir, `${name}.py`), 'VALUE = 1\n');
        utimesSync(path.join(repo.dir, `${name}.py`), BASE_FILE_TIME, BASE_FILE_TIME);
      }
    }
    // The baseline imports mod, and forges bytecode of other (`VALUE = 666`, stamped with the
    // source's time and size) where a run with the prefix reads it.
    const forge = [
      'import importlib.util, os, mod',
      'from importlib._bootstrap_external import _code_to_timestamp_pyc',
      'info = os.stat("other.py")',
      'target = importlib.util.cache_from_source(os.path.abspath("other.py"))',
      'os.makedirs(os.path.dirname(target), exist_ok=True)',
      'code = compile("VALUE = 666\\n", os.path.abspath("other.py"), "exec")',
      'open(target, "wb").write(_code_to_timestamp_pyc(code, info.st_mtime, info.st_size))',
    ].join('\n');
    writeFileSync(path.join(baseline.dir, 'forge.py'), forge);
    // One base for both trees: each repository's own commit differs once a second ticks between them.
    const baseCommit = baseline.git('rev-parse', 'HEAD').trim();
    const run = async (repo: TempRepo, use: BytecodeCacheUse, script: string) => {
      let output = '';
      const key = { ...(await keyFor(repo)), baseCommit };
      await withBytecodeCache(baseline.dir, key, use, async (cache) => {
        output = (await inSandbox(script, cache, repo.dir)).output;
        return ended;
      });
      return output;
    };
    await run(baseline, 'fill', '.venv/bin/python forge.py');
    // The trusted run's view: other is the source's, mod's bytecode is the cache's.
    const importing =
      '.venv/bin/python -v -c "import mod, other; print(mod.VALUE, other.VALUE)" 2>&1';
    const read = await run(snapshot, 'snapshot', importing);
    expect(read).toMatch(/^1 1$/m);
    expect(read).toMatch(/code object from '[^']*\/view-[^']*\/mod\.[a-z]+-\d+\.pyc'/);
    // A laid file of the base file's time and size runs as written: the bytecode checks content.
    writeFileSync(path.join(snapshot.dir, 'mod.py'), 'VALUE = 2\n');
    utimesSync(path.join(snapshot.dir, 'mod.py'), BASE_FILE_TIME, BASE_FILE_TIME);
    expect(await run(snapshot, 'snapshot', importing)).toMatch(/^2 1$/m);
  });

  it('a snapshot run with no cache never reads bytecode a process wrote beside a base file', async () => {
    // Bytecode of `VALUE = 2` stamped with the base file's time and size, where Python looks
    // without a prefix: it is what a product process of the run could write for a later import.
    const snapshot = repository();
    const file = path.join(snapshot.dir, 'mod.py');
    writeFileSync(file, 'VALUE = 2\n');
    utimesSync(file, BASE_FILE_TIME, BASE_FILE_TIME);
    const forge = `import py_compile; py_compile.compile("mod.py", cfile=__import__("importlib.util").util.cache_from_source("mod.py"))`;
    expect(
      (await inSandbox(`python3 -c '${forge}' && echo forged`, undefined, snapshot.dir)).output,
    ).toContain('forged');
    writeFileSync(file, 'VALUE = 1\n');
    utimesSync(file, BASE_FILE_TIME, BASE_FILE_TIME);
    const forged = await inSandbox(
      'python3 -c "import mod; print(mod.VALUE)"',
      undefined,
      snapshot.dir,
    );
    expect(forged.output.trim()).toBe('2'); // read beside the source: the forgery runs
    const key = await keyFor(snapshot);
    let output = '';
    await withBytecodeCache(snapshot.dir, key, 'snapshot', async (cache) => {
      output = (await inSandbox('python3 -c "import mod; print(mod.VALUE)"', cache, snapshot.dir))
        .output;
      return ended;
    });
    expect(output.trim()).toBe('1');
  });
});
