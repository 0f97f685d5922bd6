/**
 * Real test runners and Node releases from the npm registry, pinned, installed once per machine into
 * `.tmp/runners/<name>-<version>` and reused by every test (and every later `npm test`).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPOSITORY_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CACHE = path.join(REPOSITORY_ROOT, '.tmp', 'runners');

/** Node releases the suite checks `node --test` reports against, besides the Node running it. */
export const NODE_RELEASES = { 22: '22.23.3', 24: '24.21.0' } as const;
export const JEST_VERSION = '30.5.2';
export const MOCHA_VERSION = '12.0.3';
/**
 * Package managers a project can name in `packageManager` (a project naming them must get these exact
 * versions), with the npm package that ships each: yarn 2+ ("berry") is `@yarnpkg/cli-dist`.
 */
export const PACKAGE_MANAGERS = {
  pnpm: { package: 'pnpm', version: '10.34.9' },
  yarn: { package: 'yarn', version: '1.22.22' },
  yarnBerry: { package: '@yarnpkg/cli-dist', version: '4.18.1' },
} as const;

/**
 * The prefix holding `name@version`, installed when absent. The install goes to a scratch directory
 * renamed into place, so test files installing at the same time never see half a package.
 */
export function installedPackage(name: string, version: string): string {
  const directory = name.replace('/', '+'); // a scoped package's name holds a slash
  const prefix = path.join(CACHE, `${directory}-${version}`);
  if (fs.existsSync(path.join(prefix, 'installed'))) return prefix;
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
      env: { ...process.env, npm_config_update_notifier: 'false' },
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

/** The `node` binary of a pinned release (the npm package `node` ships the official binaries). */
export function nodeBinary(major: keyof typeof NODE_RELEASES): string {
  return path.join(
    installedPackage('node', NODE_RELEASES[major]),
    'node_modules',
    'node',
    'bin',
    'node',
  );
}

/** A directory to prepend to PATH so `node` is that release (npm and npx resolve through it too). */
export function nodeBinDirectory(major: keyof typeof NODE_RELEASES): string {
  return path.dirname(nodeBinary(major));
}

/** A directory to prepend to PATH so `pnpm` or `yarn` is the pinned release. */
export function packageManagerBinDirectory(name: keyof typeof PACKAGE_MANAGERS): string {
  const { package: npmPackage, version } = PACKAGE_MANAGERS[name];
  return path.join(installedPackage(npmPackage, version), 'node_modules', '.bin');
}
