import path from 'node:path';

/**
 * Files the base's runner configuration loads around every test, wherever they live: vitest/jest
 * `setupFiles`, `setupFilesAfterEnv`, `globalSetup`, `globalTeardown`, mocha's `require`, pytest's
 * `-p module` plugins. They are test support even inside a source root, so the trusted runs keep
 * the base's copy. Read from the config texts (repository-relative path → text); the names are
 * resolved against `files`, the base's tree.
 */
export function runnerSetupFiles(
  configs: ReadonlyMap<string, string>,
  files: ReadonlySet<string>,
): string[] {
  const found = new Set<string>();
  for (const [config, text] of configs) {
    const directory = path.posix.dirname(config) === '.' ? '' : path.posix.dirname(config);
    const named = /(?:^|\/)(?:pytest\.ini|tox\.ini|setup\.cfg|pyproject\.toml)$/.test(config)
      ? pytestPlugins(text)
      : path.posix.basename(config) === 'package.json'
        ? packageJsonSetupNames(text)
        : jsSetupNames(text);
    for (const name of named) {
      const file = resolveName(directory, name, files);
      if (file) found.add(file);
    }
  }
  return [...found];
}

const JS_KEYS =
  /["']?\b(?:setupFiles|setupFilesAfterEnv|globalSetup|globalTeardown|require|setupFilesAfterEach)\b["']?\s*[:=]\s*(\[[^\]]*\]|["'][^"']+["'])/g;

function jsSetupNames(text: string): string[] {
  return [...text.matchAll(JS_KEYS)].flatMap(([, value]) =>
    [...value!.matchAll(/["']([^"']+)["']/g)].map((match) => match[1]!),
  );
}

/** Setup keys of the runners' sections only: `exports` conditions also say `require`. */
const PACKAGE_SETUP_KEYS: Record<string, string[]> = {
  jest: ['setupFiles', 'setupFilesAfterEnv', 'globalSetup', 'globalTeardown'],
  mocha: ['require'],
  ava: ['require'],
};

function packageJsonSetupNames(text: string): string[] {
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch {
    return [];
  }
  const names: string[] = [];
  for (const [section, keys] of Object.entries(PACKAGE_SETUP_KEYS)) {
    const settings = (manifest as Record<string, unknown> | null)?.[section];
    if (typeof settings !== 'object' || settings === null) continue;
    for (const key of keys) {
      const value = (settings as Record<string, unknown>)[key];
      for (const name of Array.isArray(value) ? value : [value])
        if (typeof name === 'string') names.push(name);
    }
  }
  return names;
}

function pytestPlugins(text: string): string[] {
  return [...text.matchAll(/(?:^|\s)-p\s+([A-Za-z_][\w.]*)/gm)]
    .map((match) => match[1]!)
    .filter((name) => !name.startsWith('no:'))
    .map((name) => `${name.replace(/\./g, '/')}.py`);
}

const EXTENSIONS = ['', '.js', '.ts', '.mjs', '.cjs', '.jsx', '.tsx', '/index.js', '/index.ts'];

function resolveName(
  directory: string,
  name: string,
  files: ReadonlySet<string>,
): string | undefined {
  const clean = name.replace(/^<rootDir>\//, '').replace(/^\.\//, '');
  if (clean.startsWith('/')) return undefined; // outside the repository
  const base = path.posix.normalize(directory ? `${directory}/${clean}` : clean);
  const candidates = [
    ...EXTENSIONS.map((ext) => `${base}${ext}`),
    base.replace(/\.py$/, '/__init__.py'),
  ];
  return candidates.find((candidate) => files.has(candidate));
}
