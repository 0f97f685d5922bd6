import path from 'node:path';

/**
 * Files the base's runner configuration loads around every test, wherever they live: vitest/jest
 * `setupFiles`, `setupFilesAfterEnv`, `globalSetup`, `globalTeardown`, jest's `transform`,
 * `testEnvironment`, `testRunner`, `snapshotResolver`, `resolver` and `runner`, mocha's `require`,
 * `import`, `loader` and `node-option`, node's `--require`/`-r`, `--import` and `--loader` in the
 * package's test scripts (on node's command line or in the `NODE_OPTIONS` they set), pytest's `-p
 * module` plugins, `PYTEST_PLUGINS` and `PYTHONSTARTUP`. They are the runner's start-up points: test support even inside a source root, so
 * the trusted runs keep the base's copy, and one the Player changed is named. Read from the config
 * texts (repository-relative path → text); the names are resolved against `files`, the base's tree.
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

/** The configuration files whose start-up points runnerSetupFiles reads. */
export function isRunnerConfig(file: string): boolean {
  return RUNNER_CONFIG.test(file);
}

const RUNNER_CONFIG =
  /(?:^|\/)(?:(?:vitest|vite|jest)\.config\.[cm]?[jt]s|\.mocharc\.(?:js|cjs|json|ya?ml)|package\.json|pytest\.ini|tox\.ini|setup\.cfg|pyproject\.toml)$/;

/** jest's keys naming a module it loads around the tests (a preset's own are the environment's). */
const JEST_KEYS = [
  'setupFiles',
  'setupFilesAfterEnv',
  'setupFilesAfterEach',
  'globalSetup',
  'globalTeardown',
  'transform',
  'testEnvironment',
  'testRunner',
  'snapshotResolver',
  'resolver',
  'runner',
];
/** mocha's and node's: `node-option` entries read `import=./hooks.js`. */
const MOCHA_KEYS = ['require', 'import', 'loader', 'node-option'];
const JS_KEYS = new RegExp(
  `["']?\\b(?:${[...JEST_KEYS, ...MOCHA_KEYS].join('|')})\\b["']?\\s*[:=]\\s*(\\[[^\\]]*\\]|\\{[^}]*\\}|["'][^"']+["'])`,
  'g',
);

function jsSetupNames(text: string): string[] {
  return [...text.matchAll(JS_KEYS)].flatMap(([, value]) =>
    [...value!.matchAll(/["']([^"']+)["']/g)].map((match) => optionValue(match[1]!)),
  );
}

/** Setup keys of the runners' sections only: `exports` conditions also say `require`. */
const PACKAGE_SETUP_KEYS: Record<string, string[]> = {
  jest: JEST_KEYS,
  mocha: MOCHA_KEYS,
  ava: ['require'],
};

function packageJsonSetupNames(text: string): string[] {
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch {
    return [];
  }
  const record = (value: unknown) =>
    typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  const names: string[] = [];
  for (const [section, keys] of Object.entries(PACKAGE_SETUP_KEYS)) {
    const settings = record(record(manifest)?.[section]);
    for (const key of keys) names.push(...leaves(settings?.[key]).map(optionValue));
  }
  const scripts = record(record(manifest)?.scripts) ?? {};
  for (const [name, script] of Object.entries(scripts))
    if (/^(?:pre|post)?test\b/.test(name) && typeof script === 'string')
      names.push(...nodePreloads(script));
  return names;
}

/** The strings of a setting: a name, a list of names, or jest's `transform` map (`[file, options]`). */
function leaves(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value))
    return value.flatMap((item) => (Array.isArray(item) ? leaves(item[0]) : leaves(item)));
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(leaves);
  return [];
}

/** `import=./hooks.js` (mocha's `node-option`) names `./hooks.js`. */
function optionValue(value: string): string {
  return value.replace(/^(?:require|import|loader|experimental-loader|r)=/, '');
}

const PRELOAD_FLAGS = new Set(['-r', '--require', '--import', '--loader', '--experimental-loader']);
/** Programs that take node's preload flags (a `-r` of `rm` is not one). */
const NODE_PROGRAMS = new Set(['node', 'mocha', '_mocha', 'tsx', 'ts-node']);

/**
 * What node preloads for a script: `--require`/`-r`, `--import` and `--loader` given to node (or a
 * program passing node's flags on) in one of its commands, or in the `NODE_OPTIONS` it sets
 * (`NODE_OPTIONS="--import ./x.js" node --test`, through `cross-env` too).
 */
function nodePreloads(script: string): string[] {
  const names: string[] = [];
  for (const command of script.split(/&&|\|\||[;|]/)) {
    const options = /\bNODE_OPTIONS=(?:"([^"]*)"|'([^']*)'|(\S*))/.exec(command);
    const fromOptions = options ? (options[1] ?? options[2] ?? options[3] ?? '') : '';
    const words = command.split(/\s+/).filter((word) => word !== '');
    const program = words.findIndex((word) => NODE_PROGRAMS.has(path.posix.basename(word)));
    const flags = program === -1 ? [] : words.slice(program + 1);
    names.push(...preloadValues(fromOptions.split(/\s+/)), ...preloadValues(flags));
  }
  return names;
}

function preloadValues(words: readonly string[]): string[] {
  const names: string[] = [];
  words.forEach((word, index) => {
    const [flag = '', value] = word.split(/=(.*)/s, 2);
    if (!PRELOAD_FLAGS.has(flag)) return;
    const name = (value ?? words[index + 1])?.replace(/^["']|["']$/g, '');
    if (name) names.push(name);
  });
  return names;
}

/**
 * pytest's plugins and Python's start-up file named in a config: `-p module` (in `addopts`, or in a
 * `PYTEST_ADDOPTS` a tox `setenv` sets), the modules of a `PYTEST_PLUGINS` setting, and the file of
 * a `PYTHONSTARTUP` one.
 */
function pytestPlugins(text: string): string[] {
  const fromFlags = [...text.matchAll(/(?:^|\s)-p\s*([A-Za-z_][\w.]*)/gm)].map(
    (match) => match[1]!,
  );
  const fromVariable = [...text.matchAll(/\bPYTEST_PLUGINS\s*[=:]\s*["']?([\w., ]+)/g)].flatMap(
    (match) => match[1]!.split(/[\s,]+/),
  );
  const startup = [...text.matchAll(/\bPYTHONSTARTUP\s*[=:]\s*["']?([^\s"']+)/g)].map(
    (match) => match[1]!,
  );
  return [
    ...[...fromFlags, ...fromVariable]
      .filter((name) => name !== '' && !name.startsWith('no:'))
      .map((name) => `${name.replace(/\./g, '/')}.py`),
    ...startup,
  ];
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
