import {
  constants,
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import {
  mkdir,
  mkdtemp,
  readFile,
  readdir,
  realpath,
  rm,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { withDocCommentsOf } from '../analysis/rust-doc-comments.js';
import { testBlocks, withTestBlocksOf } from '../scope/rust-test-blocks.js';
import { isTestConfigFile, isTestSideFile } from '../scope/test-paths.js';
import { eventLoopSlices } from '../repo/event-loop-slices.js';
import { changedSince, listWorkingFiles, readAtCommit, treeListing } from '../repo/git.js';
import { lstatIfPresent } from '../repo/present-entries.js';
import { childOutput } from '../repo/child-output.js';
import { largeBlobs, streamBlob } from './large-blobs.js';
import { readRegularFile, withRegularFile } from '../repo/read-text.js';
import { BORROWED_DIRECTORIES } from '../repo/runner-loaded.js';
import { pathExists } from '../records/files.js';
import { STORE_PREFIX } from '../records/mirror-paths.js';
import type { TrustedSelection } from '../scope/product-code.js';

export interface Snapshot {
  dir: string;
  remove(): Promise<void>;
}

/**
 * Every file a snapshot takes from the base carries one modification time, and every file laid
 * from the Player another. Python (and pytest) trust a compiled module whose recorded source time
 * and size match: with these, the bytecode the baseline wrote for a base file matches that file in
 * every later snapshot of the base (src/runner/bytecode-cache.ts), and never a Player's file, whatever
 * its content and size. Fixed values, not the clock's, which is what a run's own writes carry.
 * 2000, not 1970: zip (wheels, sdists) refuses times before 1980.
 */
export const BASE_FILE_TIME = new Date('2000-01-01T00:00:00Z');
export const LAID_FILE_TIME = new Date('2000-01-01T00:00:01Z');

/** The base commit's tree, extracted: what the other snapshots start from. */
export interface BaseSnapshot extends Snapshot {
  commit: string;
  /** The toolchain directories linked in from the worktree, which a copy leaves out. */
  borrowed: string[];
}

/** The base commit's tree, as is: the baseline run's tree. */
export async function baseSnapshot(worktree: string, baseCommit: string): Promise<BaseSnapshot> {
  const snapshot = await emptySnapshot('coachgate-base-');
  await extractCommit(worktree, baseCommit, snapshot.dir);
  const borrowed = await borrowDirectories(worktree, snapshot.dir);
  return { ...snapshot, commit: baseCommit, borrowed };
}

/**
 * The trusted run's tree: the base tree with only the Player's product code (as the base defines it) and
 * the changes the Coach acknowledged laid over it; every other change stays as the base has it. With
 * `withNewTests`, the Player's added tests ride along, to be judged with the base's test infrastructure.
 */
export async function trustedSnapshot(
  worktree: string,
  base: BaseSnapshot,
  selection: TrustedSelection,
  withNewTests = false,
): Promise<Snapshot> {
  const snapshot = await copiedBase(
    base,
    withNewTests ? 'coachgate-new-tests-' : 'coachgate-trusted-',
  );
  await overlay(worktree, snapshot.dir, base.commit, [
    ...selection.code,
    ...selection.acknowledged,
    ...(withNewTests ? selection.new_tests : []),
  ]);
  await keepBaseRustTests(worktree, base.commit, snapshot.dir, selection);
  await borrowDirectories(worktree, snapshot.dir);
  return snapshot;
}

/**
 * The fail-to-pass run's tree: the base code with the Player's test files and test support laid over it,
 * and the base's test config, so a test that passes here does not exercise the Player's change. Sources
 * in `inlineTests` (see sourcesWithNewInlineTests) keep the base's code with the Player's in-source tests
 * spliced in; those in `doctests` (see pythonDoctestSplices) are written as given, the base's code
 * with the Player's doctests. `laid` lists the paths taken from the Player, wholly or in part.
 */
export async function failToPassSnapshot(
  worktree: string,
  base: BaseSnapshot,
  inlineTests: string[] = [],
  doctests: ReadonlyMap<string, string> = new Map(),
): Promise<Snapshot & { laid: string[] }> {
  const snapshot = await copiedBase(base, 'coachgate-f2p-');
  const working = listWorkingFiles(worktree);
  const playerTests = (await working).filter(
    (file) => !file.startsWith(STORE_PREFIX) && isTestSideFile(file) && !isTestConfigFile(file),
  );
  await overlay(worktree, snapshot.dir, base.commit, playerTests, working);
  for (const file of inlineTests) {
    const destination = path.join(snapshot.dir, file);
    const player = await readRegularFile(path.join(worktree, file));
    const tests = withTestBlocksOf(await readFile(destination, 'utf8'), player);
    await writeFile(destination, withDocCommentsOf(tests, player) ?? tests);
    await utimes(destination, LAID_FILE_TIME, LAID_FILE_TIME);
  }
  for (const [file, text] of doctests) {
    const destination = path.join(snapshot.dir, file);
    await writeFile(destination, text);
    await utimes(destination, LAID_FILE_TIME, LAID_FILE_TIME);
  }
  await borrowDirectories(worktree, snapshot.dir);
  return { ...snapshot, laid: [...playerTests, ...inlineTests, ...doctests.keys()] };
}

/**
 * The Rust sources among `files` (present at the base and in the worktree) whose in-source tests
 * (`#[cfg(test)]` items, `#[test]` functions, and doc comment examples in a library crate, which
 * rustdoc runs) the Player changed: run on the base code, the base's own copy of such a file would
 * run the base's tests in place of the Player's.
 */
export async function sourcesWithNewInlineTests(
  worktree: string,
  base: BaseSnapshot,
  files: string[],
): Promise<string[]> {
  const changed: string[] = [];
  for (const file of files.filter((name) => name.endsWith('.rs') && !isTestSideFile(name))) {
    // A link is laid as a link (the trusted runs take it whole): only files are spliced.
    const read = (root: string) =>
      lstatIfPresent(path.join(root, file))?.isFile()
        ? readRegularFile(path.join(root, file)).catch(() => undefined)
        : undefined;
    const [player, original] = [await read(worktree), await read(base.dir)];
    if (player === undefined || original === undefined) continue;
    if (
      testBlocks(player).join('\n') !== testBlocks(original).join('\n') ||
      (withDocCommentsOf(original, player) !== undefined && (await inLibrary(base.dir, file)))
    )
      changed.push(file);
  }
  return changed;
}

/** Whether `file` belongs to a crate with a library (`src/lib.rs` beside its Cargo.toml). */
async function inLibrary(root: string, file: string): Promise<boolean> {
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    if (await pathExists(path.join(root, dir, 'Cargo.toml')))
      return pathExists(path.join(root, dir, 'src', 'lib.rs'));
    if (dir === '.' || dir === path.dirname(dir)) return false;
  }
}

async function emptySnapshot(prefix: string): Promise<Snapshot> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * A new snapshot holding a copy of the base's extracted tree, made before any run: git's object
 * store decompresses each blob again for every extraction (sympy's base: 0.4-0.7 s against 0.07 s
 * for a copy). What the base borrowed is left out, for each snapshot borrows its own.
 */
async function copiedBase(base: BaseSnapshot, prefix: string): Promise<Snapshot> {
  const snapshot = await emptySnapshot(prefix);
  try {
    await copyTree(base.dir, snapshot.dir, new Set(base.borrowed));
  } catch (error) {
    await snapshot.remove();
    throw error;
  }
  return snapshot;
}

/** Files (modes kept), links (as written) and directories under `from`, but `skipped` names. */
async function copyTree(from: string, to: string, skipped: Set<string>): Promise<void> {
  const slice = eventLoopSlices();
  const directories = [''];
  while (directories.length > 0) {
    const dir = directories.pop()!;
    for (const entry of readdirSync(path.join(from, dir), { withFileTypes: true })) {
      const relative = path.join(dir, entry.name);
      if (dir === '' && skipped.has(entry.name)) continue;
      const [source, destination] = [path.join(from, relative), path.join(to, relative)];
      if (entry.isDirectory()) {
        mkdirSync(destination);
        directories.push(relative);
      } else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(source), destination);
      else {
        copyFileSync(source, destination, constants.COPYFILE_EXCL);
        utimesSync(destination, BASE_FILE_TIME, BASE_FILE_TIME);
      }
      await slice();
    }
  }
}

/** Blobs read per `git cat-file --batch` call, so a large base is never held in memory at once. */
const BLOBS_PER_BATCH = 500;

/**
 * Writes `commit`'s files into `target` from git's object store: ls-tree then cat-file, no checkout and
 * no index. Not git archive: it honours `export-ignore` from `.git/info/attributes` (the Player's,
 * dropping base tests from the snapshot) and runs smudge filters. Files, executable bits and symbolic
 * links (whatever they point at) are written as stored; a submodule is its own commit, extracted from
 * the submodule's repository when the worktree has it, else an empty directory as git leaves it.
 */
async function extractCommit(worktree: string, commit: string, target: string): Promise<void> {
  const listing = await treeListing(worktree, commit);
  const entries = listing
    .split('\0')
    .map((line) => /^(\d+) (blob|commit) ([0-9a-f]+)\t(.*)$/s.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .map(([, mode, type, oid, file]) => ({ mode: mode!, type: type!, oid: oid!, file: file! }));
  for (const submodule of entries.filter((entry) => entry.type === 'commit')) {
    const destination = path.join(target, submodule.file);
    await mkdir(destination, { recursive: true });
    await extractCommit(path.join(worktree, submodule.file), submodule.oid, destination).catch(
      () => undefined, // not checked out, or not at that commit: git would leave it empty too
    );
  }
  const all = entries.filter((entry) => entry.type === 'blob');
  const large = await largeBlobs(
    worktree,
    all.map((entry) => entry.oid),
  );
  // A link is its target's text, always small; only files are streamed.
  const streamed = (entry: (typeof all)[number]) => entry.mode !== '120000' && large.has(entry.oid);
  for (const entry of all.filter(streamed)) {
    const destination = path.join(target, entry.file);
    mkdirSync(path.dirname(destination), { recursive: true });
    rmSync(destination, { force: true, recursive: true });
    await streamBlob(worktree, entry.oid, destination, entry.mode === '100755' ? 0o755 : 0o644);
    utimesSync(destination, BASE_FILE_TIME, BASE_FILE_TIME);
  }
  const blobs = all.filter((entry) => !streamed(entry));
  const batches: (typeof blobs)[] = [];
  for (let start = 0; start < blobs.length; start += BLOBS_PER_BATCH)
    batches.push(blobs.slice(start, start + BLOBS_PER_BATCH));
  const read = (batch: typeof blobs) => {
    // The server's own git reading its object store, outside the sandbox: cat-file --batch applies
    // no filter and runs nothing from the worktree.
    const reading = childOutput('git', ['-c', 'core.fsmonitor=false', 'cat-file', '--batch'], {
      cwd: worktree,
      input: batch.map((entry) => entry.oid).join('\n') + '\n',
    }).then(({ stdout }) => stdout);
    reading.catch(() => undefined); // awaited in turn; a write failing first is the error
    return reading;
  };
  // git decompresses the next batch while this one is written: two batches held at most.
  let next = batches[0] && read(batches[0]);
  const slice = eventLoopSlices();
  for (const [index, batch] of batches.entries()) {
    const stdout = await next!;
    next = batches[index + 1] && read(batches[index + 1]!);
    let offset = 0;
    for (const entry of batch) {
      const headerEnd = stdout.indexOf(0x0a, offset);
      const size = Number(stdout.subarray(offset, headerEnd).toString('latin1').split(' ')[2]);
      const content = stdout.subarray(headerEnd + 1, headerEnd + 1 + size);
      offset = headerEnd + 1 + size + 1;
      writeEntry(path.join(target, entry.file), entry.mode, content, BASE_FILE_TIME);
      await slice();
    }
  }
}

/**
 * Replaces whatever is at `destination`: a link is replaced, never written through, and a file
 * created meanwhile in its place is an error, not overwritten. Synchronous, in the callers' slices
 * of the event loop: with three promise-based calls a file, sympy's base (2,087 files) took
 * 0.74-1.1 s to extract on tmpfs, against 0.43-0.75 s.
 */
function writeEntry(destination: string, mode: string, content: Buffer, time: Date): void {
  mkdirSync(path.dirname(destination), { recursive: true });
  rmSync(destination, { force: true, recursive: true });
  if (mode === '120000') return symlinkSync(content.toString(), destination);
  writeFileSync(destination, content, { mode: mode === '100755' ? 0o755 : 0o644, flag: 'wx' });
  utimesSync(destination, time, time);
}

/**
 * Compiled Python is never copied: Python trusts a .pyc whose recorded mtime and size match the source,
 * and a base file's mtime in a snapshot (BASE_FILE_TIME) is known to all.
 */
const BYTECODE = /(?:^|\/)__pycache__\/|\.py[co]$/;

/**
 * The Player's version of each path over the snapshot of `baseCommit`: a file or link is copied (mode
 * kept), a path the Player deleted is removed. Removals go first, so a case-only rename survives a
 * case-insensitive disk. Of 1,000 paths or more, one whose content and mode are the base's is left
 * as extracted: a monorepo's 25,000 unchanged test data files were each removed and written again
 * (the comparison is the server's own, by blob id, kept by file identity:
 * src/repo/content-hashes.ts).
 */
async function overlay(
  from: string,
  to: string,
  baseCommit: string,
  files: string[],
  working?: Promise<string[]>,
): Promise<void> {
  const wanted = files.filter((name) => !BYTECODE.test(name));
  if (wanted.length < COMPARED_FROM) return layFiles(from, to, wanted);
  const listing = working ?? listWorkingFiles(from);
  const [listed, differing] = await Promise.all([
    listing.then((names) => new Set(names)),
    changedSince(from, baseCommit, { among: wanted, working: listing }).then(
      (names) => new Set(names),
    ),
  ]);
  // What git does not list (an ignored file) is laid as before, whatever the base holds.
  await layFiles(
    from,
    to,
    wanted.filter((name) => differing.has(name) || !listed.has(name)),
  );
}

/** Below this many paths, laying them all costs less than comparing them with the base. */
const COMPARED_FROM = 1_000;

/** Lays `files` from `from` over `to`, removals first (see overlay). */
async function layFiles(from: string, to: string, laid: string[]): Promise<void> {
  const present: [string, Stats][] = [];
  const slice = eventLoopSlices();
  for (const file of laid) {
    const info = lstatIfPresent(path.join(from, file));
    if (info && (info.isFile() || info.isSymbolicLink())) present.push([file, info]);
    else if (!info) rmSync(path.join(to, file), { force: true });
    await slice();
  }
  for (const [file, info] of present) {
    const source = path.join(from, file);
    if (info.isSymbolicLink()) {
      writeEntry(path.join(to, file), '120000', Buffer.from(readlinkSync(source)), LAID_FILE_TIME);
    } else {
      const content = await withRegularFile(source, (descriptor) => readFileSync(descriptor));
      if (!content) throw new Error(`${file} stopped being a regular file while it was copied`);
      const mode = info.mode & 0o111 ? '100755' : '100644';
      writeEntry(path.join(to, file), mode, content, LAID_FILE_TIME);
    }
    await slice();
  }
}

/** Rust sources taken from the Player keep the base's in-source tests (`#[cfg(test)]` items). */
async function keepBaseRustTests(
  worktree: string,
  baseCommit: string,
  target: string,
  selection: TrustedSelection,
): Promise<void> {
  for (const file of selection.code.filter((name) => name.endsWith('.rs'))) {
    const destination = path.join(target, file);
    const player = await readFile(destination, 'utf8').catch(() => undefined);
    if (player === undefined) continue;
    const base = selection.base_files.has(file)
      ? await readAtCommit(worktree, baseCommit, file)
      : undefined;
    await writeFile(destination, withTestBlocksOf(player, base));
    await utimes(destination, LAID_FILE_TIME, LAID_FILE_TIME);
  }
}

/** Links the worktree's toolchain directories in, where the tree has none: the names linked. */
async function borrowDirectories(worktree: string, target: string): Promise<string[]> {
  const borrowed: string[] = [];
  for (const name of BORROWED_DIRECTORIES) {
    const source = path.join(worktree, name);
    if (!(await pathExists(source)) || (await pathExists(path.join(target, name)))) continue;
    borrowed.push(name);
    if (name === 'node_modules' && (await borrowNodeModules(worktree, target))) continue;
    await symlink(source, path.join(target, name));
  }
  return borrowed;
}

/**
 * node_modules holding links back into the worktree (workspace packages, a package linked to itself)
 * would hand the snapshot the Player's copy of the code: such a node_modules is rebuilt as a directory
 * of links, each into the worktree's node_modules except those, which point at the snapshot's copy.
 * False when there is no such link (the whole directory is then linked).
 */
async function borrowNodeModules(worktree: string, target: string): Promise<boolean> {
  const modules = path.join(worktree, 'node_modules');
  const root = await realpath(worktree);
  const entries: { name: string; selfLink?: string }[] = [];
  for (const name of await readdir(modules)) {
    const names = name.startsWith('@')
      ? (await readdir(path.join(modules, name)).catch(() => [])).map((inner) => `${name}/${inner}`)
      : [name];
    for (const entry of names) {
      const resolved = await realpath(path.join(modules, entry)).catch(() => undefined);
      // The worktree itself counts: `node_modules/<own name> -> ..`, as a package linked to itself.
      const inside =
        resolved !== undefined &&
        (resolved === root || resolved.startsWith(root + path.sep)) &&
        !resolved.startsWith(path.join(root, 'node_modules') + path.sep);
      entries.push({
        name: entry,
        ...(inside ? { selfLink: path.relative(root, resolved!) } : {}),
      });
    }
  }
  if (!entries.some((entry) => entry.selfLink !== undefined)) return false;
  for (const entry of entries) {
    const link = path.join(target, 'node_modules', entry.name);
    await mkdir(path.dirname(link), { recursive: true });
    await symlink(
      entry.selfLink !== undefined
        ? path.join(target, entry.selfLink)
        : path.join(modules, entry.name),
      link,
    );
  }
  return true;
}
