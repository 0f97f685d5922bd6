import { execFileSync, spawn } from 'node:child_process';
import {
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { filesDigest, treeFingerprint } from '../../src/repo/fingerprint.js';
import { changedSince } from '../../src/repo/git.js';
import { hiddenRunnerFiles, linksIntoStore } from '../../src/repo/runner-loaded.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';

/** The tree fingerprint covers what the runner loads, ignored or not, and nothing it merely writes. */
let repo: TempRepo;
afterEach(() => repo?.remove());

function project(): TempRepo {
  repo = makeRepo({
    '.gitignore': 'conftest.py\nvitest.config.ts\n*.log\n__pycache__/\n.venv/\nlocal/\n',
    'calc.py': 'def add(a, b):\n    return a + b\n',
    'tests/test_calc.py': 'def test_add():\n    pass\n',
  });
  return repo;
}

async function changes(edit: () => void): Promise<boolean> {
  const before = await treeFingerprint(repo.dir);
  edit();
  return (await treeFingerprint(repo.dir)) !== before;
}

describe('treeFingerprint', () => {
  it.each([
    ['an ignored conftest.py', 'conftest.py'],
    ['an ignored vitest config', 'vitest.config.ts'],
    ['a conftest.py inside an ignored directory', 'local/tests/conftest.py'],
    [
      'a site hook in the project virtualenv',
      '.venv/lib/python3.11/site-packages/sitecustomize.py',
    ],
    ['a .pth file in the project virtualenv', '.venv/lib/python3.11/site-packages/x.pth'],
  ])('changes when %s is written', async (_what, file) => {
    project();
    mkdirSync(path.join(repo.dir, '.venv/bin'), { recursive: true });
    symlinkSync('/usr/bin/env', path.join(repo.dir, '.venv/bin/python'));
    expect(await changes(() => repo.write(file, 'import os\n'))).toBe(true);
  });

  it('changes when .git/info/exclude changes', async () => {
    project();
    expect(await changes(() => repo.write('.git/info/exclude', '# nothing\n'))).toBe(true);
  });

  it('does not change for files the runner writes or never loads, nor for the store', async () => {
    project();
    expect(
      await changes(() => {
        repo.write('tests/run.log', 'output\n');
        repo.write('tests/__pycache__/test_calc.cpython-311.pyc', 'bytecode');
        repo.write('.guardkit/autobuild/TASK-1/review.md', '# review\n');
      }),
    ).toBe(false);
  });

  it('follows a link to the file it names', async () => {
    project();
    repo.write('.guardkit/autobuild/TASK-1/impl.py', 'A = 1\n');
    rmSync(path.join(repo.dir, 'calc.py'));
    symlinkSync('.guardkit/autobuild/TASK-1/impl.py', path.join(repo.dir, 'calc.py'));
    expect(await changes(() => repo.write('.guardkit/autobuild/TASK-1/impl.py', 'A = 2\n'))).toBe(
      true,
    );
    expect(await linksIntoStore(repo.dir)).toEqual(['calc.py']);
  });

  it('never waits on a FIFO: one named by a link is not a file', async () => {
    project();
    execFileSync('mkfifo', [path.join(repo.dir, 'tests/feed')]);
    symlinkSync('feed', path.join(repo.dir, 'tests/data.txt'));
    const before = await treeFingerprint(repo.dir);
    expect(before).toMatch(/^[0-9a-f]{64}$/);
    rmSync(path.join(repo.dir, 'tests/feed'));
    repo.write('tests/feed', '');
    expect(await treeFingerprint(repo.dir)).not.toBe(before);
  });

  /** A tree large enough for its hashes to be kept (src/repo/content-hashes.ts), settled. */
  async function largeProject(): Promise<string> {
    project();
    for (let index = 0; index < 1_000; index += 1) repo.write(`data/f${index}.txt`, `${index}\n`);
    repo.commit('data');
    // Only a hash of a file changed well before the read is kept.
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    return path.join(repo.dir, 'calc.py');
  }

  it('sees a file rewritten with its size and time restored, after its hash was kept', async () => {
    const file = await largeProject();
    const [tree, blobs] = [await treeFingerprint(repo.dir), await changedSince(repo.dir, 'HEAD')];
    expect(blobs).toEqual([]);
    expect(await treeFingerprint(repo.dir)).toBe(tree);
    // The same size and modification time, other content: only the change time tells.
    const { mtime } = statSync(file);
    writeFileSync(file, readFileSync(file, 'utf8').replace('a + b', 'a - b'));
    utimesSync(file, mtime, mtime);
    expect(await treeFingerprint(repo.dir)).not.toBe(tree);
    expect(await changedSince(repo.dir, 'HEAD')).toEqual(['calc.py']);
  });

  it('sees a file changed through a shared writable mapping, which moves neither time', async () => {
    const file = await largeProject();
    // Dirties the page (the write that moves the times), then changes it again on each line read.
    const script = [
      'import mmap, sys',
      'f = open(sys.argv[1], "r+b")',
      'm = mmap.mmap(f.fileno(), 0)',
      'm[0:1] = b"d"',
      'print("mapped", flush=True)',
      'sys.stdin.readline()',
      'i = m.find(b"a + b")',
      'm[i:i + 5] = b"a - b"',
      'print("changed", flush=True)',
      'sys.stdin.readline()',
    ].join('\n');
    const holder = spawn('python3', ['-c', script, file], { stdio: ['pipe', 'pipe', 'inherit'] });
    const lines = createInterface({ input: holder.stdout })[Symbol.asyncIterator]();
    try {
      expect((await lines.next()).value).toBe('mapped');
      await new Promise((resolve) => setTimeout(resolve, 2_100));
      const times = statSync(file, { bigint: true });
      const tree = await treeFingerprint(repo.dir);
      expect(await changedSince(repo.dir, 'HEAD')).toEqual([]);
      holder.stdin.write('\n');
      expect((await lines.next()).value).toBe('changed');
      expect(statSync(file, { bigint: true }).ctimeNs).toBe(times.ctimeNs);
      expect(await treeFingerprint(repo.dir)).not.toBe(tree);
      expect(await changedSince(repo.dir, 'HEAD')).toEqual(['calc.py']);
    } finally {
      holder.kill();
    }
  });

  it('lists ignored runner files but not ignored data', async () => {
    project();
    repo.write('conftest.py', '');
    repo.write('local/tests/conftest.py', '');
    repo.write('local/tests/data.log', '');
    // A toolchain inside an ignored directory (a scratch install), which runners skip too.
    repo.write('local/tools/node_modules/dep/test/dep.test.js', '');
    repo.write('local/tools/.venv/lib/python3.11/site-packages/dep/conftest.py', '');
    repo.write('local/node_modules_notes/test_notes.py', '');
    expect(await hiddenRunnerFiles(repo.dir)).toEqual([
      'conftest.py',
      'local/node_modules_notes/test_notes.py',
      'local/tests/conftest.py',
    ]);
  });
});

it('a link into the store by an absolute path, or dangling, is still a link into the store', async () => {
  repo = makeRepo({ 'a.txt': 'a\n' });
  mkdirSync(path.join(repo.dir, '.guardkit/autobuild/T'), { recursive: true });
  symlinkSync(path.join(repo.dir, '.guardkit/autobuild/T'), path.join(repo.dir, 'lib'));
  symlinkSync('.guardkit/autobuild/T/later.py', path.join(repo.dir, 'later.py'));
  writeFileSync(path.join(repo.dir, 'ok.py'), '');
  symlinkSync('a.txt', path.join(repo.dir, 'b.txt'));
  expect(await linksIntoStore(repo.dir)).toEqual(['later.py', 'lib']);
});

describe('filesDigest', () => {
  it('follows content, mode and deletion of the files named, and nothing else', async () => {
    project();
    const digest = () => filesDigest(repo.dir, ['tests/test_calc.py', 'tests/gone.py']);
    const before = await digest();
    repo.write('calc.py', 'def add(a, b):\n    return 0\n');
    expect(await digest()).toBe(before);
    repo.write('tests/test_calc.py', 'def test_add():\n    assert False\n');
    const edited = await digest();
    expect(edited).not.toBe(before);
    repo.write('tests/gone.py', '');
    expect(await digest()).not.toBe(edited);
  });

  it('stands for nothing when a file leads out of the tree, or nowhere', async () => {
    project();
    const outside = makeRepo({ 'helper.py': 'X = 1\n' });
    try {
      symlinkSync(path.join(outside.dir, 'helper.py'), path.join(repo.dir, 'tests/helper.py'));
      expect(await filesDigest(repo.dir, ['tests/helper.py'])).toBeUndefined();
      symlinkSync('../calc.py', path.join(repo.dir, 'tests/calc_link.py'));
      expect(await filesDigest(repo.dir, ['tests/calc_link.py'])).toMatch(/^[0-9a-f]{64}$/);
      symlinkSync('missing.py', path.join(repo.dir, 'tests/dangling.py'));
      expect(await filesDigest(repo.dir, ['tests/dangling.py'])).toBeUndefined();
    } finally {
      outside.remove();
    }
  });
});
