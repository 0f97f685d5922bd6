import {
  copyFile,
  lstat,
  mkdir,
  mkdtemp,
  readFile,
  readlink,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isTestConfigFile, isTestSideFile } from '../core/test-paths.js';
import { git, listAtCommit, listWorkingFiles, readAtCommit } from '../repo/git.js';
import { BORROWED_DIRECTORIES } from '../repo/runner-loaded.js';
import { pathExists } from '../store/files.js';
import { STORE_PREFIX } from '../store/paths.js';

/** Package scripts that run around the tests: the trusted run takes them from the base. */
const TEST_SCRIPTS = ['pretest', 'test', 'posttest'];
/** package.json keys that configure a runner (jest reads its config there): taken from the base too. */
const RUNNER_CONFIG_KEYS = ['jest'];

export interface Snapshot {
  dir: string;
  remove(): Promise<void>;
}

/** The base commit's tree, as is: the baseline run's tree. */
export async function baseSnapshot(worktree: string, baseCommit: string): Promise<Snapshot> {
  const snapshot = await emptySnapshot('coachgate-base-');
  await extractCommit(worktree, baseCommit, snapshot.dir);
  await borrowDirectories(worktree, snapshot.dir);
  return snapshot;
}

/**
 * The trusted run's tree: the Player's code (tracked + untracked-not-ignored) with every base test file,
 * test-support file and test config put back as the base has it, the Player's own test-side files removed,
 * and package.json's test scripts from the base. The Player's tests are judged elsewhere (fail-to-pass).
 */
export async function trustedSnapshot(worktree: string, baseCommit: string): Promise<Snapshot> {
  const snapshot = await emptySnapshot('coachgate-trusted-');
  const baseFiles = await listAtCommit(worktree, baseCommit, ['.']);
  const candidate = (await listWorkingFiles(worktree)).filter(
    // package.json is also the dependency manifest: the Player's is kept, with the base's test settings.
    (file) => !file.startsWith(STORE_PREFIX) && (!isTestSideFile(file) || file === 'package.json'),
  );
  await copyFiles(worktree, snapshot.dir, candidate);
  await extractCommit(
    worktree,
    baseCommit,
    snapshot.dir,
    baseFiles.filter(isTestSideFile).filter((file) => file !== 'package.json'),
  );
  await withBaseTestScripts(worktree, baseCommit, snapshot.dir);
  await borrowDirectories(worktree, snapshot.dir);
  return snapshot;
}

/**
 * The fail-to-pass run's tree: the base code with the Player's test files and test support laid over it,
 * and the base's test config, so a test that passes here does not exercise the Player's change.
 */
export async function failToPassSnapshot(worktree: string, baseCommit: string): Promise<Snapshot> {
  const snapshot = await emptySnapshot('coachgate-f2p-');
  await extractCommit(worktree, baseCommit, snapshot.dir);
  const playerTests = (await listWorkingFiles(worktree)).filter(
    (file) => !file.startsWith(STORE_PREFIX) && isTestSideFile(file) && !isTestConfigFile(file),
  );
  await copyFiles(worktree, snapshot.dir, playerTests);
  await borrowDirectories(worktree, snapshot.dir);
  return snapshot;
}

async function emptySnapshot(prefix: string): Promise<Snapshot> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Blobs read per `git cat-file --batch` call, so a large base is never held in memory at once. */
const BLOBS_PER_BATCH = 500;

/**
 * Writes `commit`'s files (all, or the given paths) into `target` from git's object store: ls-tree then
 * cat-file, no checkout and no index. Not git archive: it honours `export-ignore` from
 * `.git/info/attributes` (the Player's, dropping base tests from the snapshot) and runs smudge filters.
 */
async function extractCommit(
  worktree: string,
  commit: string,
  target: string,
  files?: string[],
): Promise<void> {
  if (files && files.length === 0) return;
  const listing = await git(worktree).raw([
    'ls-tree',
    '-r',
    '-z',
    '--full-tree',
    commit,
    ...(files ? ['--', ...files.map((file) => `:(literal)${file}`)] : []),
  ]);
  const entries = listing
    .split('\0')
    .map((line) => /^(\d+) blob ([0-9a-f]+)\t(.*)$/s.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .map(([, mode, oid, file]) => ({ mode: mode!, oid: oid!, file: file! }));
  const { execa } = await import('execa'); // on first use: execa is ~100 modules, too many for start-up
  for (let start = 0; start < entries.length; start += BLOBS_PER_BATCH) {
    const batch = entries.slice(start, start + BLOBS_PER_BATCH);
    const { stdout: bytes } = await execa(
      'git',
      ['-c', 'core.fsmonitor=false', 'cat-file', '--batch'],
      {
        cwd: worktree,
        input: batch.map((entry) => entry.oid).join('\n') + '\n',
        encoding: 'buffer',
      },
    );
    const stdout = Buffer.from(bytes);
    let offset = 0;
    for (const entry of batch) {
      const headerEnd = stdout.indexOf(0x0a, offset);
      const size = Number(stdout.subarray(offset, headerEnd).toString('latin1').split(' ')[2]);
      const content = stdout.subarray(headerEnd + 1, headerEnd + 1 + size);
      offset = headerEnd + 1 + size + 1;
      const destination = path.join(target, entry.file);
      await mkdir(path.dirname(destination), { recursive: true });
      if (entry.mode === '120000') await symlink(content.toString(), destination);
      else await writeFile(destination, content, { mode: entry.mode === '100755' ? 0o755 : 0o644 });
    }
  }
}

/**
 * Compiled Python is never copied: Python trusts a .pyc whose recorded mtime and size match the source,
 * and an extracted base file's mtime (the commit time) is easy to know.
 */
const BYTECODE = /(?:^|\/)__pycache__\/|\.py[co]$/;

async function copyFiles(from: string, to: string, files: string[]): Promise<void> {
  for (const file of files.filter((name) => !BYTECODE.test(name))) {
    const source = path.join(from, file);
    const target = path.join(to, file);
    const info = await lstat(source).catch(() => undefined);
    if (!info) continue; // deleted in the worktree but still in the index
    await mkdir(path.dirname(target), { recursive: true });
    if (info.isSymbolicLink()) await symlink(await readlink(source), target);
    else if (info.isFile()) await copyFile(source, target);
  }
}

/**
 * package.json as the Player has it (dependencies may change), but with the base's test scripts and
 * runner config keys: a Player's `pretest` or `jest.testPathIgnorePatterns` never shapes the trusted run.
 */
async function withBaseTestScripts(
  worktree: string,
  baseCommit: string,
  target: string,
): Promise<void> {
  const candidateFile = path.join(target, 'package.json');
  if (!(await pathExists(candidateFile))) return;
  type Manifest = Record<string, unknown> & { scripts?: Record<string, string> };
  const parse = (text: string | undefined): Manifest | undefined => {
    try {
      return text === undefined ? undefined : (JSON.parse(text) as Manifest);
    } catch {
      return undefined;
    }
  };
  const base = parse(await readAtCommit(worktree, baseCommit, 'package.json')) ?? {};
  // An unreadable candidate manifest fails the run on its own, visibly.
  const manifest = parse(await readFile(candidateFile, 'utf8'));
  if (!manifest) return;
  const scripts = { ...(manifest.scripts ?? {}) };
  for (const name of TEST_SCRIPTS) {
    if (base.scripts?.[name] === undefined) delete scripts[name];
    else scripts[name] = base.scripts[name];
  }
  const trusted: Manifest = { ...manifest, scripts };
  for (const key of RUNNER_CONFIG_KEYS) {
    if (base[key] === undefined) delete trusted[key];
    else trusted[key] = base[key];
  }
  await writeFile(candidateFile, JSON.stringify(trusted, null, 2));
}

async function borrowDirectories(worktree: string, target: string): Promise<void> {
  for (const name of BORROWED_DIRECTORIES) {
    const source = path.join(worktree, name);
    if ((await pathExists(source)) && !(await pathExists(path.join(target, name))))
      await symlink(source, path.join(target, name));
  }
}
