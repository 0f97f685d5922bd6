import {
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PACKAGE_ROOT } from '../package.js';
import { stateRoot } from '../records/state-directory.js';
import { isWithin } from '../repo/worktree-paths.js';
import type { NetworkMode } from '../config/sandbox-policy.js';
import type { BytecodeCache } from '../runner/bytecode-cache-types.js';

/**
 * What one sandboxed run sees, as plain paths, for every backend. The rule is default-deny for the
 * user's home: it is replaced by an empty private directory and only toolchains and caches a runner
 * needs are put back; the rest of the file system is read-only; coachgate's own secrets are hidden
 * wherever they live.
 */
export interface SandboxRequest {
  cwd: string;
  /** Paths the run may write besides `cwd` (e.g. the runner's report directory). */
  writable: string[];
  network: NetworkMode;
  /**
   * `toolchains`: an empty home with the toolchains put back (test runs, gates). `user`: the user's
   * home, writable (the Player agent needs its own configuration and login).
   */
  home: 'toolchains' | 'user';
  /** A login shell starts the command: the shell's startup files in the home are readable. */
  loginShell?: boolean;
  /**
   * Paths inside writable ones that stay read-only: the driver's files in the Player's worktree, the
   * base's tests in a trusted snapshot, coachgate's node harness guard in the report directory.
   */
  readOnly?: string[];
  /** Python's bytecode cache, in the hidden state directory (src/runner/bytecode-cache.ts). */
  bytecodeCache?: BytecodeCache;
}

export interface Exposure {
  home: string;
  /** Replaced by an empty private directory (each run gets its own, discarded afterwards). */
  emptied: string[];
  /** Read-only again after `emptied` (toolchains, the repository, symlink targets). */
  readOnly: string[];
  /** Writable, after everything above. */
  writable: string[];
  /** Read-only again after `writable`: coachgate's install, the startup files of the user's shells. */
  protected: string[];
  /** Hidden last, so no bind above can uncover them: directories (emptied) and files (nulled). */
  hiddenDirectories: string[];
  hiddenFiles: string[];
  /**
   * Put back after everything is hidden: the run's bytecode cache, which lives in the state
   * directory and holds nothing but bytecode.
   */
  revealed: { path: string; writable: boolean }[];
}

/**
 * Toolchains installed per user, relative to $HOME: read-only, so `pytest`, `cargo`, `node` from nvm
 * and friends are found exactly as the user's shell finds them. Credential files never live in these.
 */
const HOME_TOOLCHAINS = [
  '.pyenv',
  '.rbenv',
  '.nvm',
  '.volta',
  '.fnm',
  '.asdf',
  '.rustup',
  '.cargo/bin',
  '.sdkman',
  '.local/bin',
  '.local/lib',
  '.local/share/uv',
  '.local/share/pnpm',
  '.local/share/mise',
  '.local/share/fnm',
  '.bun/bin',
  '.deno/bin',
  'go/bin',
  '.gitconfig',
  '.config/git/config',
  '.config/git/ignore',
];

/** Package stores a runner reads but never needs to write when the packages are already there. */
const HOME_READ_ONLY_CACHES = ['go/pkg/mod', '.cargo/registry', '.cargo/git', '.m2/repository'];

/** Caches a runner cannot work without writing (`go test` refuses to run without its build cache). */
const HOME_WRITABLE_CACHES = ['.cache/go-build'];

/**
 * Shell startup files: readable by login-shell runs (which exist to read them), and read-only in the
 * Player agent's writable home (a later shell of the user would execute them).
 */
const STARTUP_FILES = [
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.profile',
  '.zshrc',
  '.zshenv',
  '.zprofile',
  '.zlogin',
  '.config/fish',
  '.config/autostart',
  '.config/systemd',
];

/**
 * Credential stores in the Player agent's otherwise visible home: an agent that edits code needs none
 * of them (the driver merges; the agent's own login lives in its own configuration), and with the
 * network it needs they would be one `curl` away. Directories, then files.
 */
const PLAYER_HIDDEN_HOME_DIRECTORIES = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.config/gcloud',
  '.kube',
  '.docker',
  '.config/gh',
  '.password-store',
];
const PLAYER_HIDDEN_HOME_FILES = ['.git-credentials', '.netrc', '.pypirc'];

/**
 * In a repository's git directory the Player may commit (objects, refs, index) but not change what
 * git runs later for the user (its configuration and hooks), what is checked out in the main
 * checkout, or the packed refs (the base branch among them).
 */
const GIT_PROTECTED = ['config', 'hooks', 'HEAD', 'packed-refs'];

/** Files that must never be readable by a run, registered by the server (the HTTP tokens file). */
const registeredSecrets = new Set<string>();

export function hideFromRuns(file: string): void {
  registeredSecrets.add(path.resolve(file));
}

/**
 * Whether every run of every coachgate process hides `file`: only the state directory is (the
 * sandboxed Player agent sees the user's home).
 */
export function isHiddenEverywhere(file: string): boolean {
  return isWithin(path.resolve(file), stateRoot());
}

export function secretFiles(): string[] {
  return [...registeredSecrets];
}

/** Where coachgate itself is installed: readable (it is published code), never writable. */
export function installDirectory(): string {
  return fileURLToPath(PACKAGE_ROOT).replace(/\/$/, '');
}

export function exposureFor(request: SandboxRequest, env: Record<string, string>): Exposure {
  const home = os.homedir();
  const inHome = (relative: string[]) => relative.map((entry) => path.join(home, entry));
  const fromEnv = (names: string[]) =>
    names.map((name) => env[name]).filter((value): value is string => Boolean(value));
  const temporary = [...new Set(['/tmp', '/var/tmp', os.tmpdir()])];
  const runtime = typeof process.getuid === 'function' ? [`/run/user/${process.getuid()}`] : [];
  const emptied = [
    ...temporary,
    ...runtime,
    ...(request.home === 'toolchains' ? [home] : []),
  ].filter(existsSync);
  const player = request.home === 'user';
  const repository = repositoryPaths(request.cwd);
  const readOnly =
    request.home === 'toolchains'
      ? [
          ...inHome(HOME_TOOLCHAINS),
          ...(request.loginShell ? inHome(STARTUP_FILES) : []),
          ...inHome(HOME_READ_ONLY_CACHES),
          ...fromEnv(['PYENV_ROOT', 'NVM_DIR', 'VOLTA_HOME', 'RUSTUP_HOME', 'GOMODCACHE']),
        ]
      : [];
  const writable = [
    ...(request.home === 'toolchains'
      ? [...inHome(HOME_WRITABLE_CACHES), ...fromEnv(['GOCACHE'])]
      : [home]),
  ];
  return {
    home,
    emptied,
    readOnly: outermost(
      [
        ...readOnly,
        ...(player ? [] : repository),
        ...reachedFrom(request.cwd, env, emptied, home),
      ].filter(existsSync),
    ),
    writable: [
      ...writable.filter(existsSync),
      ...(player ? repository : []),
      request.cwd,
      ...borrowedToolchains(request.cwd),
      ...request.writable,
    ],
    protected: [
      ...(player
        ? [
            ...inHome(STARTUP_FILES),
            installDirectory(),
            ...repository.flatMap((directory) =>
              GIT_PROTECTED.map((entry) => path.join(directory, entry)),
            ),
          ]
        : []),
      ...serverCode(request.cwd),
      ...(request.readOnly ?? []),
    ].filter(existsSync),
    // Docker's socket is root on the host; the run never needs it.
    hiddenDirectories: [
      stateRoot(),
      ...(player ? inHome(PLAYER_HIDDEN_HOME_DIRECTORIES) : []),
    ].filter(existsSync),
    hiddenFiles: [
      ...secretFiles(),
      '/run/docker.sock',
      '/var/run/docker.sock',
      ...(player ? inHome(PLAYER_HIDDEN_HOME_FILES) : []),
    ].filter(existsSync),
    // A cache removed since it was chosen is left hidden: Python then compiles, as without one.
    revealed: (request.bytecodeCache?.revealed ?? [])
      .filter(existsSync)
      .map((entry) => ({ path: entry, writable: request.bytecodeCache!.writable })),
  };
}

/**
 * The entries no other entry contains. The read-only binds are made one after another, so one inside
 * another shows nothing more (PATH's pyenv shims inside $PYENV_ROOT), and each bind costs every run
 * start: bubblewrap re-reads the mount table for each.
 */
function outermost(entries: string[]): string[] {
  const unique = [...new Set(entries)];
  return unique.filter(
    (entry) => !unique.some((other) => other !== entry && isWithin(entry, other)),
  );
}

/**
 * The git directories a checkout reads (`git` inside tests, build scripts that ask for the commit):
 * for a linked worktree, its `.git` file names a directory under the main repository's common dir.
 */
function repositoryPaths(cwd: string): string[] {
  let text: string;
  try {
    text = readFileSync(path.join(cwd, '.git'), 'utf8');
  } catch {
    return [];
  }
  const gitdir = /^gitdir:\s*(.+)$/m.exec(text)?.[1]?.trim();
  if (!gitdir) return [];
  const directory = path.resolve(cwd, gitdir);
  try {
    const common = readFileSync(path.join(directory, 'commondir'), 'utf8').trim();
    return [directory, path.resolve(directory, common)];
  } catch {
    return [directory];
  }
}

const BORROWED = new Set(['node_modules', '.venv', 'venv']);

/**
 * A snapshot or base checkout borrows the worktree's node_modules and virtualenv through top-level
 * symlinks; runners write into them (vite's .vite-temp), so their targets are writable, as in the
 * worktree itself. Only a target of the same name is followed: a link to ~/.ssh exposes nothing.
 */
function borrowedToolchains(cwd: string): string[] {
  const targets: string[] = [];
  for (const name of BORROWED) {
    try {
      const target = realpathSync(path.join(cwd, name));
      if (target === path.join(cwd, name) || path.basename(target) !== name) continue;
      // Every hop too: a snapshot's link names the worktree's node_modules, itself often a link, and
      // the worktree is not in the sandbox, so the chain would break at that hop.
      targets.push(...linkHops(path.join(cwd, name)).filter((hop) => path.basename(hop) === name));
      targets.push(target);
    } catch {
      // Absent or dangling: nothing to borrow.
    }
  }
  return [...new Set(targets)];
}

/** The paths a chain of symlinks passes through after `link` itself (at most 8 hops). */
function linkHops(link: string): string[] {
  const hops: string[] = [];
  for (let at = link; hops.length < 8 && lstatSync(at).isSymbolicLink();) {
    at = path.resolve(path.dirname(at), readlinkSync(at));
    hops.push(at);
  }
  return hops;
}

/**
 * What the run's own command reaches inside a directory the sandbox empties: the directories on its
 * PATH (a package manager's shims, a toolchain unpacked under /tmp) and the targets of links in its
 * node_modules (`npm link`, a package cache). Read-only, and never $HOME itself or the state directory.
 */
function reachedFrom(cwd: string, env: Record<string, string>, emptied: string[], home: string) {
  const inEmptied = (entry: string) =>
    entry !== home &&
    !isWithin(entry, stateRoot()) &&
    emptied.some((directory) => isWithin(entry, directory));
  const candidates = [
    ...(env.PATH ?? '').split(path.delimiter).filter((entry) => path.isAbsolute(entry)),
    ...linkedPackages(path.join(cwd, 'node_modules')),
  ];
  const reached = new Set<string>();
  for (const entry of candidates) {
    for (const form of [entry, realOrSelf(entry)]) {
      const whole = enclosingModules(form);
      if (inEmptied(whole)) reached.add(whole);
    }
  }
  return [...reached];
}

/**
 * The node_modules a path lies in, else the path: a package (or `.bin`) needs its siblings, which
 * its own dependencies and its bin links resolve to.
 */
function enclosingModules(entry: string): string {
  const parts = entry.split(path.sep);
  const at = parts.lastIndexOf('node_modules');
  return at > 0 ? parts.slice(0, at + 1).join(path.sep) : entry;
}

/** Targets of the symlinked packages in a node_modules (scoped ones too), at most 256. */
function linkedPackages(modules: string): string[] {
  const targets: string[] = [];
  const visit = (directory: string, depth: number) => {
    for (const entry of safeReaddir(directory)) {
      if (targets.length >= 256) return;
      const full = path.join(directory, entry);
      if (depth === 0 && entry.startsWith('@')) visit(full, 1);
      else if (isLink(full)) targets.push(realOrSelf(full));
    }
  };
  visit(modules, 0);
  return targets;
}

function safeReaddir(directory: string): string[] {
  try {
    return readdirSync(directory);
  } catch {
    return [];
  }
}

function isLink(file: string): boolean {
  try {
    return lstatSync(file).isSymbolicLink();
  } catch {
    return false;
  }
}

function realOrSelf(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

/**
 * The code the server itself runs, never writable by a run: its bundle, its compiled files and its
 * manifest. (Not when the run is in coachgate's own checkout, which its tests build.)
 */
function serverCode(cwd: string): string[] {
  const install = installDirectory();
  if (isWithin(cwd, install)) return [];
  return ['bundle', 'dist', 'package.json'].map((entry) => path.join(install, entry));
}
