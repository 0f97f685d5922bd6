import { execFile } from 'node:child_process';
import { mkdir, realpath, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { pathExists } from '../records/files.js';
import { readRegularFile } from '../repo/read-text.js';
import type { TestCommand } from './detect.js';
import type { RunEnvironment } from './environment.js';
import { npmRelease } from './npm-provided-manager.js';
import { findOnPath } from './platform.js';
import { stripAnsi } from './report/text.js';

const run = promisify(execFile);

/** The command and environment a run uses once the declared package manager is found. */
export interface ManagerChoice {
  command: TestCommand;
  environment: RunEnvironment;
  notes: string[];
}

/** An exact release, as corepack requires in `packageManager` (a `+sha512.…` hash may follow). */
const EXACT_SPEC = /^(pnpm|yarn)@(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)(?:\+[0-9A-Za-z.]+)?$/;
/** The commands corepack's own shims provide for each manager (`corepack enable` links the same). */
const SHIMS: Record<string, string[]> = { pnpm: ['pnpm', 'pnpx'], yarn: ['yarn', 'yarnpkg'] };
/** A download of the package manager may take a while on a slow line, never a whole test run. */
const INSTALL_TIMEOUT_MS = 120_000;

/**
 * A project naming `pnpm@x` or `yarn@x` in `packageManager` runs `pnpm test` as its users do: with
 * their pnpm when one is on PATH, else through corepack (Node 20–24 ship it), which runs the exact
 * release declared, else with the manager the project's own devDependencies put in node_modules/.bin,
 * else with the exact release declared as npm installs it (src/runner/npm-provided-manager.ts).
 * The project's node_modules/.bin does not count as "on PATH": a user's shell does not have it.
 * Anything else runs as detected, and a missing manager stays an `environment` failure.
 */
export async function declaredPackageManager(
  command: TestCommand,
  environment: RunEnvironment,
  cwd: string,
  reportDirectory: string,
  signal?: AbortSignal,
): Promise<ManagerChoice> {
  const unchanged = { command, environment, notes: [] };
  const [name, ...rest] = command.argv ?? [];
  if (command.runner !== 'npm' || !command.packageManager || !name || !Object.hasOwn(SHIMS, name))
    return unchanged;
  const basePath = withoutPrefix(environment);
  if (await findOnPath(name, { ...environment.env, PATH: basePath })) return unchanged;
  const corepack = await corepackRelease(command.packageManager, environment, basePath, signal);
  if (corepack.folder) {
    const shims = await linkShims(corepack.script!, name, reportDirectory);
    return {
      command: { ...command, argv: ['corepack', name, ...rest] },
      // corepack's shims make a `pnpm lint` inside the script work as under `corepack enable`; the
      // release's folder on PATH is how a sandboxed run sees corepack's cache, which lives in the
      // home the sandbox replaces (directories on PATH are put back read-only). It holds no program.
      environment: {
        ...environment,
        env: {
          ...environment.env,
          PATH: [environment.env.PATH, shims, corepack.folder].join(path.delimiter),
        },
      },
      notes: [
        `${name} is not on PATH: runs through corepack (${command.packageManager}, ` +
          `${corepack.downloaded ? 'downloaded by corepack from the npm registry' : "from corepack's cache"})`,
      ],
    };
  }
  const local = path.join(cwd, 'node_modules', '.bin', name);
  if (await pathExists(local)) {
    return {
      ...unchanged,
      notes: [
        `${name} is not on PATH and corepack could not provide ${command.packageManager} ` +
          `(${corepack.failure}): runs the ${name} of the project's devDependencies ` +
          `(node_modules/.bin/${name})`,
      ],
    };
  }
  const version = EXACT_SPEC.exec(command.packageManager)?.[2];
  const npm = version
    ? await npmRelease(
        name,
        version,
        { ...environment.env, PATH: basePath },
        reportDirectory,
        signal,
      )
    : { failure: 'npm installs exact releases only', folder: undefined, shims: undefined };
  if (!npm.folder) {
    return {
      ...unchanged,
      notes: [
        `${name} is not on PATH and neither corepack nor npm could provide it: ` +
          `${corepack.failure}; ${npm.failure}`,
      ],
    };
  }
  return {
    command,
    // As for corepack: the commands linked in a directory of the run, the package's folder for
    // the sandbox to show.
    environment: {
      ...environment,
      env: {
        ...environment.env,
        PATH: [environment.env.PATH, npm.shims, npm.folder].join(path.delimiter),
      },
    },
    notes: [
      `${name} is not on PATH and corepack could not provide ${command.packageManager} ` +
        `(${corepack.failure}): runs ${command.packageManager} as npm installed it from the registry`,
    ],
  };
}

interface CorepackRelease {
  /** The release's folder in corepack's cache, when corepack holds it. */
  folder?: string;
  /** corepack's own script, whose directory holds its shims. */
  script?: string;
  downloaded?: boolean;
  failure?: string;
}

/**
 * The declared release in corepack's cache, asking corepack to download it when absent. The download
 * is the server's own (outside the run's sandbox, which has no network by default), of a release
 * checked against an exact version and verified by corepack's registry signatures; it runs in the
 * report directory, so no file of the project (a `.corepack.env` among them) is read.
 */
async function corepackRelease(
  spec: string,
  environment: RunEnvironment,
  basePath: string,
  signal?: AbortSignal,
): Promise<CorepackRelease> {
  const exact = EXACT_SPEC.exec(spec);
  if (!exact) return { failure: `${spec} is not an exact release, which corepack requires` };
  const binary = await findOnPath('corepack', { ...environment.env, PATH: basePath });
  if (!binary) return { failure: 'corepack is not installed (Node 25 and later ship none)' };
  const script = await realpath(binary);
  const folder = path.join(corepackHome(environment.env), 'v1', exact[1]!, exact[2]!);
  if (await pathExists(path.join(folder, '.corepack'))) return { folder, script };
  try {
    // The server's own node runs corepack: a `node` in the project's node_modules/.bin never does.
    await run(process.execPath, [script, 'install', '-g', '--cache-only', spec], {
      cwd: os.tmpdir(),
      env: { ...environment.env, PATH: basePath, COREPACK_ENABLE_DOWNLOAD_PROMPT: '0' },
      timeout: INSTALL_TIMEOUT_MS,
      signal,
    });
  } catch (error) {
    return { failure: `corepack install failed: ${corepackError(error)}` };
  }
  if (!(await pathExists(path.join(folder, '.corepack'))))
    return { failure: `corepack installed ${spec}, but not in ${folder}` };
  return { folder, script, downloaded: true };
}

/** Where corepack keeps its releases (its own rule: COREPACK_HOME, else the cache directory). */
function corepackHome(env: Record<string, string>): string {
  if (env.COREPACK_HOME) return env.COREPACK_HOME;
  const home = env.HOME ?? os.homedir();
  const cache =
    env.XDG_CACHE_HOME ??
    env.LOCALAPPDATA ??
    path.join(home, process.platform === 'win32' ? 'AppData/Local' : '.cache');
  return path.join(cache, 'node', 'corepack');
}

/** corepack's error line (`Error: No compatible signature found in package metadata`). */
function corepackError(error: unknown): string {
  const { stderr, message } = error as { stderr?: string; message?: string };
  // corepack colours its `Internal Error: …` line.
  const line = stripAnsi(stderr ?? '')
    .split('\n')
    .find((text) => /^(?:\w+ )?\w*Error\b/.test(text));
  return (line ?? message ?? String(error)).trim().slice(0, 200);
}

/** Links to corepack's shims for `name`, as `corepack enable` makes them, in a directory of the run. */
async function linkShims(script: string, name: string, reportDirectory: string): Promise<string> {
  const directory = path.join(reportDirectory, 'corepack-shims');
  await mkdir(directory, { recursive: true });
  for (const shim of SHIMS[name]!) {
    const target = path.join(path.dirname(script), `${shim}.js`);
    if (await pathExists(target)) await symlink(target, path.join(directory, shim));
  }
  return directory;
}

/** PATH as the user's shell has it: without the project's virtualenv and node_modules/.bin. */
function withoutPrefix(environment: RunEnvironment): string {
  const prefix = new Set(environment.path_prefix);
  return (environment.env.PATH ?? '')
    .split(path.delimiter)
    .filter((entry) => !prefix.has(entry))
    .join(path.delimiter);
}

/**
 * The shell the package manager runs scripts with, so a script shell standing in for it runs the
 * same one: `script-shell` from the environment, the project's .npmrc or the user's (npm's order),
 * else `sh`, the default of npm, pnpm and yarn 1 on POSIX.
 */
export async function userScriptShell(cwd: string, env: Record<string, string>): Promise<string> {
  const variable = Object.entries(env).find(
    ([name]) => name.toLowerCase() === 'npm_config_script_shell',
  )?.[1];
  if (variable) return variable;
  for (const rc of [path.join(cwd, '.npmrc'), path.join(env.HOME ?? os.homedir(), '.npmrc')]) {
    const text = await readRegularFile(rc).catch(() => '');
    const value = /^\s*script-shell\s*=\s*(.+?)\s*$/m.exec(text)?.[1];
    if (value) return value.replace(/^(["'])(.*)\1$/, '$2');
  }
  return 'sh';
}
