import { execFile } from 'node:child_process';
import { mkdir, readFile, rename, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { pathExists } from '../records/files.js';
import { findOnPath } from './platform.js';

const run = promisify(execFile);

/** A download of the package manager may take a while on a slow line, never a whole test run. */
const INSTALL_TIMEOUT_MS = 120_000;

/** A release npm installed for a project that declares it and has no other way to get it. */
export interface NpmRelease {
  /** The installed package's folder: on PATH, it is how a sandboxed run sees it (no program). */
  folder?: string;
  /** A directory of the run with the package's commands (its `bin` map) linked in. */
  shims?: string;
  failure?: string;
}

/**
 * The declared release (`pnpm@10.6.5`, `yarn@1.22.22`, `yarn@4.5.0`), installed by npm from the
 * registry npm is configured with, into a cache of coachgate's, when corepack cannot provide it
 * (an old corepack whose registry keys were rotated, a registry mirror without signatures, Node 25
 * and later without corepack). npm checks the tarball against the registry's integrity hash, as for
 * any dependency; install scripts do not run. The commands come from the package's own `bin` map.
 */
export async function npmRelease(
  name: string,
  /** An exact version, as `packageManager` declares it. */
  version: string,
  env: Record<string, string>,
  reportDirectory: string,
  signal?: AbortSignal,
): Promise<NpmRelease> {
  const npmPackage =
    name === 'yarn' && Number(version.split('.')[0]) >= 2 ? '@yarnpkg/cli-dist' : name;
  const prefix = path.join(cacheRoot(env), `${npmPackage.replace('/', '+')}-${version}`);
  const folder = path.join(prefix, 'node_modules', npmPackage);
  if (!(await pathExists(path.join(folder, 'package.json')))) {
    const npm = await findOnPath('npm', env);
    if (!npm) return { failure: 'npm is not on PATH either' };
    const failure = await install(npm, `${npmPackage}@${version}`, prefix, env, signal);
    if (failure) return { failure };
  }
  const manifest = JSON.parse(await readFile(path.join(folder, 'package.json'), 'utf8')) as {
    bin?: Record<string, string> | string;
  };
  const bins = typeof manifest.bin === 'string' ? { [name]: manifest.bin } : (manifest.bin ?? {});
  const shims = path.join(reportDirectory, 'package-manager-shims');
  await mkdir(shims, { recursive: true });
  for (const [command, file] of Object.entries(bins))
    await symlink(path.join(folder, file), path.join(shims, command));
  return { folder, shims };
}

/** Installs `spec` under `prefix` through a scratch directory renamed into place: never half seen. */
async function install(
  npm: string,
  spec: string,
  prefix: string,
  env: Record<string, string>,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const scratch = `${prefix}.${process.pid}-${Date.now()}`;
  try {
    await mkdir(scratch, { recursive: true });
    // In the scratch directory, so no file of the project (an .npmrc among them) is read.
    await run(
      npm,
      [
        'install',
        '--prefix',
        scratch,
        '--no-save',
        '--ignore-scripts',
        '--no-audit',
        '--no-fund',
        spec,
      ],
      { cwd: scratch, env, timeout: INSTALL_TIMEOUT_MS, signal },
    );
    await rename(scratch, prefix).catch(async (error: NodeJS.ErrnoException) => {
      // Another run installed it first: theirs stands.
      if (!(await pathExists(prefix))) throw error;
    });
    return undefined;
  } catch (error) {
    return `npm install ${spec} failed: ${npmError(error)}`;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** coachgate's cache of package managers (XDG_CACHE_HOME's rule, as corepack's own cache). */
function cacheRoot(env: Record<string, string>): string {
  const cache = env.XDG_CACHE_HOME ?? path.join(env.HOME ?? os.homedir(), '.cache');
  return path.join(cache, 'coachgate', 'package-managers');
}

/** npm's error line (`npm error code E404`), else the message. */
function npmError(error: unknown): string {
  const { stderr, message } = error as { stderr?: string; message?: string };
  const line = (stderr ?? '').split('\n').find((text) => /^npm (?:ERR!|error) code\b/.test(text));
  return (line ?? message ?? String(error)).trim().slice(0, 200);
}
