/**
 * Real test runners and Node releases, pinned. The runners `npm test` needs are exact-pinned
 * devDependencies, so `npm install` brings them and a test run downloads nothing; anything else (the
 * Node releases CI installs, runners not in package.json) comes from the npm registry once per machine
 * into `.tmp/runners/<name>-<version>` and is reused by every later run.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { networkEnv } from './network.js';

const REPOSITORY_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CACHE = path.join(REPOSITORY_ROOT, '.tmp', 'runners');

/** Node releases the suite checks `node --test` reports against, besides the Node running it. */
export const NODE_RELEASES = { 22: '22.23.3', 24: '24.21.0' } as const;
export const JEST_VERSION = '30.5.2';
export const MOCHA_VERSION = '12.0.3';
export const UVU_VERSION = '0.5.6';
// ava 7+ needs Node 22; 6.4 is the newest that runs on Node 20.
export const AVA_VERSION = '6.4.1';
export const TAPE_VERSION = '5.10.2';
export const NYC_VERSION = '18.0.0';
export const NODE_TAP_VERSION = '21.8.0';
// npm-run-all2 (the maintained fork of npm-run-all: `npm-run-all`, `run-s`, `run-p`); 9 needs Node 22.
export const NPM_RUN_ALL_VERSION = '8.0.4';
// engines Node >= 20.17; xo 2 asks for 20.19 and xo 5 for 22.
export const XO_VERSION = '1.2.3';
export const TSD_VERSION = '0.33.0';
export const CHAI_VERSION = '4.5.0';
/** The dependency an honest Player adds with npm install (in npm's cache for an offline install). */
export const MS_VERSION = '2.1.3';

/**
 * Every npm package the suite installs on first use, with its pinned version (one list, so
 * tests/runner/pinned-runners.test.ts can check what npm resolved for each).
 */
export const CACHED_PACKAGES: ReadonlyArray<readonly [string, string]> = [
  ['jest', JEST_VERSION],
  ['mocha', MOCHA_VERSION],
  ['uvu', UVU_VERSION],
  ['ava', AVA_VERSION],
  ['tape', TAPE_VERSION],
  ['nyc', NYC_VERSION],
  ['tap', NODE_TAP_VERSION],
  ['npm-run-all2', NPM_RUN_ALL_VERSION],
  ['xo', XO_VERSION],
  ['tsd', TSD_VERSION],
  ['chai', CHAI_VERSION],
  ['ms', MS_VERSION],
];
/**
 * Package managers a project can name in `packageManager` (a project naming them must get these exact
 * versions), with the npm package that ships each: yarn 2+ ("berry") is `@yarnpkg/cli-dist`.
 */
export const PACKAGE_MANAGERS = {
  pnpm: { package: 'pnpm', version: '10.34.9' },
  yarn: { package: 'yarn', version: '1.22.22' },
  yarnBerry: { package: '@yarnpkg/cli-dist', version: '4.18.1' },
} as const;

/** The version of `name` that `npm install` put in the repository's node_modules, if any. */
function devDependencyVersion(name: string): string | undefined {
  try {
    const manifest = path.join(REPOSITORY_ROOT, 'node_modules', name, 'package.json');
    return (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { version: string }).version;
  } catch {
    return undefined;
  }
}

function cachePrefix(name: string, version: string): string {
  return path.join(CACHE, `${name.replace('/', '+')}-${version}`); // a scoped name holds a slash
}

/**
 * A prefix whose `node_modules` holds `name@version`: the repository's own when its devDependencies
 * pin that version, else the cache's, installed when absent. The install goes to a scratch directory
 * renamed into place, so test files installing at the same time never see half a package.
 */
export function installedPackage(name: string, version: string): string {
  if (devDependencyVersion(name) === version) return REPOSITORY_ROOT;
  const prefix = cachePrefix(name, version);
  if (fs.existsSync(path.join(prefix, 'installed'))) return prefix;
  const directory = path.basename(prefix);
  fs.mkdirSync(CACHE, { recursive: true });
  const scratch = fs.mkdtempSync(path.join(CACHE, `.${directory}-`));
  execFileSync(
    'npm',
    [
      'install',
      '--prefix',
      scratch,
      '--no-audit',
      '--no-fund',
      '--save-exact',
      `${name}@${version}`,
    ],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...networkEnv(), npm_config_update_notifier: 'false' },
      timeout: 300_000,
    },
  );
  fs.writeFileSync(path.join(scratch, 'installed'), `${name}@${version}\n`);
  try {
    fs.renameSync(scratch, prefix);
  } catch {
    // Another test file finished the same install first; theirs is as good as ours.
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  return prefix;
}

/**
 * The `node` binary of a pinned release (the npm package `node` ships the official binaries), or
 * undefined when it is not installed: `npm test` never downloads a Node release; CI installs them first
 * (`.ci/node-versions.sh install`), so tests needing one skip elsewhere and say so.
 */
export function nodeBinary(major: keyof typeof NODE_RELEASES): string | undefined {
  const prefix = cachePrefix('node', NODE_RELEASES[major]);
  const binary = path.join(prefix, 'node_modules', 'node', 'bin', 'node');
  return fs.existsSync(path.join(prefix, 'installed')) && fs.existsSync(binary)
    ? binary
    : undefined;
}

/**
 * A directory to prepend to PATH so `pnpm` or `yarn` is the pinned release: it holds links to that
 * package's own commands only (yarn 1 and yarn 4 both name theirs `yarn`, and node_modules/.bin can link
 * one of them), built once in a scratch directory renamed into place.
 */
export function packageManagerBinDirectory(name: keyof typeof PACKAGE_MANAGERS): string {
  const { package: npmPackage, version } = PACKAGE_MANAGERS[name];
  const packageDirectory = path.join(
    installedPackage(npmPackage, version),
    'node_modules',
    npmPackage,
  );
  const directory = path.join(REPOSITORY_ROOT, '.tmp', 'bin', `${name}-${version}`);
  if (fs.existsSync(directory)) return directory;
  const { bin } = JSON.parse(
    fs.readFileSync(path.join(packageDirectory, 'package.json'), 'utf8'),
  ) as { bin: Record<string, string> };
  fs.mkdirSync(path.dirname(directory), { recursive: true });
  const scratch = fs.mkdtempSync(`${directory}-`);
  for (const [command, file] of Object.entries(bin)) {
    fs.chmodSync(path.join(packageDirectory, file), 0o755);
    fs.symlinkSync(path.join(packageDirectory, file), path.join(scratch, command));
  }
  try {
    fs.renameSync(scratch, directory);
  } catch {
    fs.rmSync(scratch, { recursive: true, force: true }); // another test file made it first
  }
  return directory;
}

/**
 * A corepack home (COREPACK_HOME) holding the pinned release of `name`, as `corepack install`
 * leaves it after a download (the package, plus the `.corepack` file naming its commands), built from
 * the installed package so no test downloads: corepack then runs it offline.
 */
export function corepackHomeWith(name: 'pnpm' | 'yarn', home: string): void {
  const { package: npmPackage, version } = PACKAGE_MANAGERS[name];
  const source = path.join(installedPackage(npmPackage, version), 'node_modules', npmPackage);
  const release = path.join(home, 'v1', name, version);
  fs.cpSync(source, release, { recursive: true });
  const { bin } = JSON.parse(fs.readFileSync(path.join(source, 'package.json'), 'utf8')) as {
    bin: Record<string, string>;
  };
  fs.writeFileSync(
    path.join(release, '.corepack'),
    JSON.stringify({ locator: { name, reference: version }, bin, hash: 'sha512.offline' }),
  );
}

/** A project's node_modules holding the pinned packages, linked from their cached installs (bins too). */
export function linkPackages(project: { dir: string }, packages: Array<[string, string]>): void {
  const modules = path.join(project.dir, 'node_modules');
  fs.mkdirSync(path.join(modules, '.bin'), { recursive: true });
  for (const [name, version] of packages) {
    const installed = path.join(installedPackage(name, version), 'node_modules');
    for (const entry of fs.readdirSync(installed)) {
      const target = path.join(modules, entry);
      // A shared install's own caches (vite's `.vite-temp`) are not the project's to write.
      if (entry.startsWith('.') && entry !== '.bin') continue;
      if (entry === '.bin') {
        for (const bin of fs.readdirSync(path.join(installed, '.bin'))) {
          const link = path.join(modules, '.bin', bin);
          if (!fs.existsSync(link))
            fs.symlinkSync(fs.realpathSync(path.join(installed, '.bin', bin)), link);
        }
      } else if (!fs.existsSync(target)) fs.symlinkSync(path.join(installed, entry), target);
    }
  }
}
