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
import { execa } from 'execa';
import { isTestConfigFile, isTestSideFile } from '../core/test-paths.js';
import { listAtCommit, listWorkingFiles } from '../repo/git.js';
import { BORROWED_DIRECTORIES } from '../repo/runner-loaded.js';
import { pathExists } from '../store/files.js';
import { STORE_PREFIX } from '../store/paths.js';

/** Package scripts that run around the tests: the trusted run takes them from the base. */
const TEST_SCRIPTS = ['pretest', 'test', 'posttest'];

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
    (file) => !file.startsWith(STORE_PREFIX) && !isTestSideFile(file),
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

/** Writes `commit`'s files (all, or the given paths) into `target` with git archive: no checkout, no index. */
async function extractCommit(
  worktree: string,
  commit: string,
  target: string,
  files?: string[],
): Promise<void> {
  if (files && files.length === 0) return;
  await execa('git', ['archive', '--format=tar', commit, ...(files ? ['--', ...files] : [])], {
    cwd: worktree,
    encoding: 'buffer',
  }).pipe('tar', ['-x', '-C', target]);
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

/** package.json as the Player has it (dependencies may change), but with the base's test scripts. */
async function withBaseTestScripts(
  worktree: string,
  baseCommit: string,
  target: string,
): Promise<void> {
  const candidateFile = path.join(target, 'package.json');
  if (!(await pathExists(candidateFile))) return;
  type Manifest = { scripts?: Record<string, string> };
  const base = await execa('git', ['show', `${baseCommit}:package.json`], {
    cwd: worktree,
    reject: false,
  });
  const baseScripts =
    base.exitCode === 0 ? ((JSON.parse(base.stdout) as Manifest).scripts ?? {}) : {};
  let manifest: Manifest;
  try {
    manifest = JSON.parse(await readFile(candidateFile, 'utf8')) as Manifest;
  } catch {
    return; // An unreadable manifest fails the run on its own, visibly.
  }
  const scripts = { ...(manifest.scripts ?? {}) };
  for (const name of TEST_SCRIPTS) {
    if (baseScripts[name] === undefined) delete scripts[name];
    else scripts[name] = baseScripts[name];
  }
  await writeFile(candidateFile, JSON.stringify({ ...manifest, scripts }, null, 2));
}

async function borrowDirectories(worktree: string, target: string): Promise<void> {
  for (const name of BORROWED_DIRECTORIES) {
    const source = path.join(worktree, name);
    if ((await pathExists(source)) && !(await pathExists(path.join(target, name))))
      await symlink(source, path.join(target, name));
  }
}
