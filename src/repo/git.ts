import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, readlink, realpath, type FileHandle } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { SimpleGit } from 'simple-git';
import { CallerError } from '../errors/errors.js';
import { quotePrefix } from '../errors/quote.js';
import { readOnceAtCommit } from './commit-reads.js';
import { hashPass, type HashPass } from './content-hashes.js';
import { queryFile } from './query-process.js';
import { childOutput } from './child-output.js';
import { MAX_TEXT_FILE_BYTES, UnreadableFileError } from './read-text.js';

export interface BaseCommit {
  commit: string;
  /** How the base was chosen, for reports: `--base main`, `merge-base HEAD main`, `HEAD`. */
  source: string;
}

/** Files hashed at once by changedSince. */
const PARALLEL_READS = 16;

const DEFAULT_BRANCHES = ['main', 'master', 'origin/main', 'origin/master'];

/** simple-git is required on first use (its CommonJS build loads synchronously), not at start-up. */
function loadSimpleGit(): typeof import('simple-git').simpleGit {
  return (createRequire(import.meta.url)('simple-git') as typeof import('simple-git')).simpleGit;
}

/**
 * Settings that override anything the repository configures to run a program. The worktree's `.git/config`
 * (and its includes, `config.worktree`, `info/attributes`) belong to the Player; the server must never run
 * what they name. Command-line `-c` wins over every config file.
 */
const NO_REPOSITORY_COMMANDS = [
  'core.fsmonitor=false',
  'core.hooksPath=/dev/null',
  'core.pager=cat',
  // No transport at all: uploadpack/receivepack, sshCommand, gitProxy and lazy fetches need one.
  'protocol.allow=never',
];

/**
 * `-c` arguments for the server's own git processes spawned without simple-git (queries, blob reads,
 * snapshots): the same overrides, so nothing the repository configures runs. They run git on the
 * object store, never the worktree's code, so they go around the sandbox.
 */
export const GIT_CONFIG_ARGS = ['core.quotepath=false', ...NO_REPOSITORY_COMMANDS].flatMap(
  (pair) => ['-c', pair],
);

/** simple-git refuses `-c` keys that can run programs; these flags allow exactly the overrides above. */
const OVERRIDES_ALLOWED = {
  allowUnsafeFsMonitor: true,
  allowUnsafeHooksPath: true,
  allowUnsafePager: true,
  allowUnsafeProtocolOverride: true,
  allowUnsafeFilter: true,
} as const;

/**
 * git for read-only queries. Only commands that never convert file content go through it (rev-parse,
 * merge-base, cat-file, ls-tree, ls-files), so textconv, filter and external-diff drivers are never
 * consulted; changedSince hashes working files itself. Commands that write a checkout use {@link gitForCheckout}.
 */
export function git(worktree: string, overrides: string[] = []): SimpleGit {
  // Inherit the environment as is: simple-git refuses an explicit env carrying EDITOR/PAGER-like variables,
  // and coachgate only runs local, non-interactive git commands.
  return loadSimpleGit()({
    baseDir: worktree,
    config: ['core.quotepath=false', ...NO_REPOSITORY_COMMANDS, ...overrides],
    unsafe: OVERRIDES_ALLOWED,
  });
}

/**
 * The output of a read-only git query, for hot paths whose answer is often empty (`ls-files --ignored`
 * in a clean tree): simple-git waits 50 ms after any command that printed nothing, and a run fingerprints
 * the tree several times. Same overrides as {@link git}.
 */
export async function gitQuery(worktree: string, args: string[]): Promise<string> {
  // From a small helper process: a spawn from the server forks all of its memory.
  const { stdout } = await queryFile('git', [...GIT_CONFIG_ARGS, ...args], worktree);
  return stdout;
}

/**
 * git for commands that write files (worktree add): every clean/smudge/process filter the configuration
 * defines is emptied, which git treats as "no filter". Driver names are arbitrary, so they are read first;
 * a driver added between that read and the checkout is not covered, so keep checkouts rare (baselines only).
 */
export async function gitForCheckout(worktree: string): Promise<SimpleGit> {
  const names = new Set<string>();
  const listing = await git(worktree)
    .raw(['config', '--null', '--name-only', '--get-regexp', '^filter\\.'])
    .catch(() => '');
  for (const key of listing.split('\0')) {
    const match = /^filter\.(.+)\.[^.]+$/s.exec(key);
    if (match) names.add(match[1]!);
  }
  const emptied = [...names].flatMap((name) =>
    ['clean', 'smudge', 'process']
      .map((part) => `filter.${name}.${part}=`)
      .concat(`filter.${name}.required=false`),
  );
  return git(worktree, emptied);
}

/** Fails with a clear message unless `worktree` is the top of a git work tree with at least one commit. */
export async function assertRepository(worktree: string): Promise<void> {
  // Side by side, and the root check's error first: a former repository has no HEAD either.
  const [, head] = await Promise.all([assertWorkTreeRoot(worktree), commitOf(worktree, 'HEAD')]);
  if (!head) throw noCommits(worktree);
}

/** The commit HEAD names; a clear error when there is none yet. */
async function headCommit(worktree: string): Promise<string> {
  const head = await commitOf(worktree, 'HEAD');
  if (!head) throw noCommits(worktree);
  return head;
}

function noCommits(worktree: string): CallerError {
  return new CallerError(
    `${worktree} has no commits yet.`,
    'Commit the task files and configuration first; the first commit is the trusted base.',
  );
}

/**
 * Work trees found to be roots, with the identity of their `.git` entry then: every tool call
 * checks its worktree, and the answer holds while that entry is the same one.
 */
const checkedRoots = new Map<string, string>();

/** Fails with a clear message unless `worktree` is the top of a git work tree (commits or not). */
export async function assertWorkTreeRoot(worktree: string): Promise<void> {
  const entry = await lstat(path.join(worktree, '.git')).catch(() => undefined);
  const stamp = entry && `${entry.dev}:${entry.ino}:${entry.mtimeMs}`;
  if (stamp && checkedRoots.get(worktree) === stamp) return;
  let top: string;
  try {
    top = (await gitQuery(worktree, ['rev-parse', '--show-toplevel'])).trim();
  } catch {
    if (!(await lstat(worktree).catch(() => undefined)))
      throw new CallerError(
        `${worktree} does not exist.`,
        'Pass the root of an existing git repository or git worktree.',
      );
    const gitDirectory = await gitQuery(worktree, ['rev-parse', '--is-inside-git-dir']).then(
      (answer) => answer.trim() === 'true',
      () => false,
    );
    throw new CallerError(
      gitDirectory
        ? `${worktree} is a git directory (where git keeps its data), not a worktree.`
        : `${worktree} is not a git repository.`,
      'Pass the root of a git repository or git worktree (coachgate reads trusted files from its base commit).',
    );
  }
  if (!(await sameDirectory(top, worktree))) {
    throw new CallerError(
      `${worktree} is inside the git repository ${top}, not its root.`,
      `Pass the repository root: ${top}.`,
    );
  }
  if (stamp) checkedRoots.set(worktree, stamp);
}

/**
 * The trusted base: explicit ref, else merge-base of HEAD with the default branch, else HEAD. Fails
 * as {@link assertRepository} does when HEAD names no commit.
 */
export async function resolveBase(worktree: string, ref?: string): Promise<BaseCommit> {
  if (ref) {
    if (ref.startsWith('-'))
      throw new CallerError(
        `Base ref ${quotePrefix(ref)} looks like an option.`,
        'Pass a branch, tag or commit name.',
      );
    const commit = await commitOf(worktree, ref);
    if (!commit)
      throw new CallerError(
        `Base ref ${quotePrefix(ref)} does not name a commit in ${worktree}.`,
        'Pass a branch, tag or commit that exists (e.g. main).',
      );
    return { commit, source: `ref ${ref}` };
  }
  const [head, branches] = await Promise.all([headCommit(worktree), defaultBranches(worktree)]);
  for (const [branch, tip] of branches) {
    // Unrelated histories have none: try the next candidate, then fall back to HEAD.
    const commit = await mergeBase(worktree, head, tip);
    if (commit) return { commit, source: `merge-base HEAD ${branch}` };
  }
  return { commit: head, source: 'HEAD' };
}

/** The default branches that exist, in DEFAULT_BRANCHES order, with their commits: one git call. */
async function defaultBranches(worktree: string): Promise<[string, string][]> {
  const refs = DEFAULT_BRANCHES.map((branch) =>
    branch.startsWith('origin/') ? `refs/remotes/${branch}` : `refs/heads/${branch}`,
  );
  const listing = await gitQuery(worktree, [
    'for-each-ref',
    '--format=%(refname)%00%(objectname)',
    ...refs,
  ]).catch(() => '');
  const tips = new Map(
    listing
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split('\0') as [string, string]),
  );
  return DEFAULT_BRANCHES.flatMap((branch, index) => {
    const tip = tips.get(refs[index]!);
    return tip ? [[branch, tip] as [string, string]] : [];
  });
}

/** Merge bases by the pair of commits: a pair's answer never changes, and every tool call asks. */
const mergeBases = new Map<string, Promise<string | undefined>>();
const MERGE_BASES_KEPT = 256;

function mergeBase(worktree: string, a: string, b: string): Promise<string | undefined> {
  const key = `${worktree}\0${a}\0${b}`;
  let known = mergeBases.get(key);
  if (!known) {
    known = gitQuery(worktree, ['merge-base', a, b]).then(
      (output) => output.trim() || undefined,
      () => undefined,
    );
    if (mergeBases.size >= MERGE_BASES_KEPT) mergeBases.delete(mergeBases.keys().next().value!);
    mergeBases.set(key, known);
  }
  return known;
}

/** The file's content at `commit`, or undefined when it does not exist there. */
export async function readAtCommit(
  worktree: string,
  commit: string,
  relativePath: string,
): Promise<string | undefined> {
  return readOnceAtCommit(worktree, commit, `blob\0${relativePath}`, () =>
    readBlob(worktree, `${commit}:${relativePath}`, relativePath),
  );
}

/**
 * `git cat-file blob` (the stored blob: no textconv, no filter), with the limit a working-tree read
 * has: past MAX_TEXT_FILE_BYTES git is stopped and the read rejects with EFBIG, so a huge committed
 * file costs no more memory than a huge working file. Undefined when the commit has no such file.
 */
function readBlob(worktree: string, spec: string, file: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', [...GIT_CONFIG_ARGS, 'cat-file', 'blob', spec], {
      cwd: worktree,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    // Listened first: a spawn that failed for want of descriptors has no stdout, and an unheard
    // 'error' event would end the server.
    child.on('error', reject);
    if (!child.stdout) return;
    const chunks: Buffer[] = [];
    let size = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_TEXT_FILE_BYTES) chunks.push(chunk);
      else child.kill();
    });
    child.on('close', (code) => {
      if (size > MAX_TEXT_FILE_BYTES)
        reject(
          new UnreadableFileError(file, 'EFBIG', `is over the ${MAX_TEXT_FILE_BYTES}-byte limit`),
        );
      else resolve(code === 0 ? Buffer.concat(chunks).toString('utf8') : undefined);
    });
  });
}

/** Files (worktree-relative) present at `commit` under the given directories. */
export async function listAtCommit(
  worktree: string,
  commit: string,
  directories: string[],
): Promise<string[]> {
  const output = await readOnceAtCommit(worktree, commit, `names\0${directories.join('\0')}`, () =>
    git(worktree).raw(['ls-tree', '-r', '-z', '--name-only', commit, '--', ...directories]),
  );
  return output!.split('\0').filter(Boolean);
}

/** `git ls-tree -r -z --full-tree` of `commit`: every entry with its mode, type and object id. */
export async function treeListing(worktree: string, commit: string): Promise<string> {
  const listing = await readOnceAtCommit(worktree, commit, 'tree', () =>
    git(worktree).raw(['ls-tree', '-r', '-z', '--full-tree', commit]),
  );
  return listing!;
}

/** Tracked and untracked (not ignored) files in the working tree, worktree-relative. */
export async function listWorkingFiles(worktree: string): Promise<string[]> {
  const output = await gitQuery(worktree, [
    'ls-files',
    '-z',
    '--cached',
    '--others',
    '--exclude-standard',
  ]);
  return [...new Set(output.split('\0').filter(Boolean))].sort();
}

/** Paths that differ between `commit` and the working tree, committed, staged, unstaged or untracked. */
export async function changedSince(
  worktree: string,
  commit: string,
  /**
   * Only these paths are compared (`among`), and none under `skipPrefix` (the server's store);
   * `working` is the tree's listing when the caller reads it for something else too.
   */
  options: { among?: readonly string[]; skipPrefix?: string; working?: Promise<string[]> } = {},
): Promise<string[]> {
  const among = options.among && new Set(options.among);
  const wanted = (file: string) =>
    (!options.skipPrefix || !file.startsWith(options.skipPrefix)) && (!among || among.has(file));
  // Content is hashed here, as git stores it, rather than by `git diff`: git reads racily clean files back
  // through the repository's clean filters, which are the Player's programs.
  const base = new Map<string, string>();
  for (const entry of (await treeListing(worktree, commit)).split('\0')) {
    const match = /^(\d+) \w+ ([0-9a-f]+)\t(.*)$/s.exec(entry);
    if (match && match[1] !== '160000' && wanted(match[3]!))
      base.set(match[3]!, `${match[1]} ${match[2]}`);
  }
  const working = (await (options.working ?? listWorkingFiles(worktree))).filter(wanted);
  const present = new Set(working);
  const changed = new Set([...base.keys()].filter((file) => !present.has(file)));
  const pass = await hashPass(working.length);
  for (let start = 0; start < working.length; start += PARALLEL_READS) {
    const batch = working.slice(start, start + PARALLEL_READS);
    const entries = await Promise.all(
      batch.map((file) => blobEntry(path.join(worktree, file), pass)),
    );
    batch.forEach((file, index) => {
      if (entries[index] !== base.get(file)) changed.add(file);
    });
  }
  return [...changed].sort();
}

/** `<mode> <blob id>` of a working file as git would store it without filters; undefined when it is gone. */
async function blobEntry(file: string, pass?: HashPass): Promise<string | undefined> {
  try {
    const info = await lstat(file, { bigint: true });
    if (info.isSymbolicLink()) return `120000 ${blobId(Buffer.from(await readlink(file)))}`;
    if (!info.isFile()) return undefined;
    const mode = info.mode & 0o111n ? '100755' : '100644';
    // Kept by the file's identity: a 50,000-file tree is compared several times a turn.
    const id = pass?.known('git-blob', file, info) ?? (await readBlobId(file, pass));
    return id && `${mode} ${id}`;
  } catch {
    return undefined;
  }
}

const STREAMED_BLOB_BYTES = 4 * 1024 * 1024;

/** A regular file's blob id, kept in `pass` by the identity of the file read; undefined for anything else. */
async function readBlobId(file: string, pass?: HashPass): Promise<string | undefined> {
  const handle = await open(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const info = await handle.stat({ bigint: true });
    if (!info.isFile()) return undefined;
    // A large file (a run's log, a data set) is hashed as it streams, never held whole.
    const id =
      info.size > STREAMED_BLOB_BYTES
        ? await streamedBlobId(handle, info.size)
        : blobId(await handle.readFile());
    pass?.keep('git-blob', file, info, id);
    return id;
  } finally {
    await handle.close();
  }
}

async function streamedBlobId(handle: FileHandle, size: bigint): Promise<string> {
  const hash = createHash('sha1').update(`blob ${size}\0`);
  for await (const chunk of handle.createReadStream({ autoClose: false }))
    hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function blobId(content: Buffer): string {
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
}

/** Whether `commit` is a commit this repository holds (a pin can outlive its repository). */
export async function hasCommit(worktree: string, commit: string): Promise<boolean> {
  return (await commitOf(worktree, commit)) !== undefined;
}

/**
 * The first root commit of `commit`'s history (sorted, for merged histories): an identity of the
 * repository a commit came from, shared by its clones, different for a repository made anew.
 */
export async function rootCommit(worktree: string, commit: string): Promise<string | undefined> {
  const roots = await gitQuery(worktree, ['rev-list', '--max-parents=0', commit]).catch(() => '');
  return roots.split('\n').filter(Boolean).sort()[0];
}

/**
 * The commit `ref` names; a missing ref prints nothing, so this is a gitQuery (no simple-git wait).
 * Asked of git each time, even for a commit id: a pinned commit can be pruned, or its repository
 * made anew at its path.
 */
async function commitOf(worktree: string, ref: string): Promise<string | undefined> {
  try {
    return (
      (await gitQuery(worktree, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])).trim() ||
      undefined
    );
  } catch {
    return undefined;
  }
}

async function sameDirectory(a: string, b: string): Promise<boolean> {
  const [ra, rb] = await Promise.all([realpath(a).catch(() => a), realpath(b).catch(() => b)]);
  return ra === rb;
}

/**
 * The text of many files at `commit`, in one `git cat-file --batch` (stored blobs: no filter, no
 * textconv). Files that do not exist there, or whose path cannot be named on one line, are absent.
 */
export async function readManyAtCommit(
  worktree: string,
  commit: string,
  files: readonly string[],
): Promise<Map<string, string>> {
  const named = files.filter((file) => !/[\n\r]/.test(file));
  const texts = new Map<string, string>();
  if (named.length === 0) return texts;
  // git itself on the object store, outside the sandbox like every read-only query: cat-file runs
  // no filter, and the overrides keep the repository's configured programs from running.
  const { stdout: bytes } = await childOutput('git', [...GIT_CONFIG_ARGS, 'cat-file', '--batch'], {
    cwd: worktree,
    input: named.map((file) => `${commit}:${file}`).join('\n') + '\n',
  });
  let offset = 0;
  for (const file of named) {
    const headerEnd = bytes.indexOf(0x0a, offset);
    if (headerEnd === -1) break;
    const header = bytes.subarray(offset, headerEnd).toString('utf8').split(' ');
    if (header.at(-1) === 'missing') {
      offset = headerEnd + 1;
      continue;
    }
    const size = Number(header[2]);
    if (header[1] === 'blob')
      texts.set(file, bytes.subarray(headerEnd + 1, headerEnd + 1 + size).toString('utf8'));
    offset = headerEnd + 1 + size + 1;
  }
  return texts;
}
