import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { isJsFile, isTestFile } from './test-paths.js';
import { isIgnoredByGo } from './import-reach.js';

/**
 * What the base defines as the project's product code, per ecosystem, from its own tree and manifests.
 * The trusted runs take only these paths from the Player; everything else comes from the base. A path
 * no rule claims is not code: where a file's role is unclear, the base's version is the one that runs.
 */
export interface ProductCode {
  /** One line per source root, e.g. `python: src/calc/ (pyproject.toml)`, for the Coach to read. */
  roots: string[];
  isProductCode(file: string): boolean;
  /** The `roots` line that makes `file` product code, if one does. */
  rootOf(file: string): string | undefined;
  /**
   * Directories (repository-relative, '' for the root) Python imports the product from: a snapshot's
   * run puts its own copies first on sys.path, ahead of any editable install pointing at the worktree.
   */
  pythonImportRoots: string[];
}

/** A source root: files under `directory` (or the one `file`) with an accepted name. */
interface SourceRoot {
  ecosystem: 'python' | 'javascript' | 'rust' | 'go';
  /** Repository-relative directory ('' for the repository root) or file. */
  path: string;
  isFile: boolean;
  /** The manifest that defines it, or the convention. */
  source: string;
  /** Python: the directory the package or module is imported from. */
  importRoot?: string;
}

/** Manifests the rules read; the caller passes their base content by repository-relative path. */
export const MANIFEST_NAMES = new Set([
  'pyproject.toml',
  'setup.cfg',
  'setup.py',
  'package.json',
  'tsconfig.json',
  'Cargo.toml',
  'go.mod',
]);

/** Directories never searched for manifests: toolchains, output and the tests' own projects. */
const NOT_PROJECTS = new Set(['node_modules', '.venv', 'venv', 'target', 'dist', 'build']);

/** A path inside installed packages, build output or a dot-directory: never the project's source. */
export function isOutsideSource(file: string): boolean {
  return file
    .split('/')
    .slice(0, -1)
    .some((part) => NOT_PROJECTS.has(part) || part.startsWith('.') || part === '__pycache__');
}

/** Manifest paths among the base's files (the caller reads them at the base). */
export function manifestPaths(baseFiles: readonly string[]): string[] {
  return baseFiles.filter((file) => {
    const parts = file.split('/');
    return (
      MANIFEST_NAMES.has(parts.at(-1)!) &&
      !parts.slice(0, -1).some((part) => NOT_PROJECTS.has(part) || part.startsWith('.')) &&
      !parts.slice(0, -1).some(isTestDirectoryName)
    );
  });
}

/** The product code of the base tree (`baseFiles`, with `manifests` read at the base). */
export function productCode(
  baseFiles: readonly string[],
  manifests: ReadonlyMap<string, string>,
): ProductCode {
  const roots: SourceRoot[] = [];
  const projects = new Map<string, Set<string>>();
  for (const file of manifests.keys()) {
    const directory = path.posix.dirname(file) === '.' ? '' : path.posix.dirname(file);
    if (!projects.has(directory)) projects.set(directory, new Set());
    projects.get(directory)!.add(path.posix.basename(file));
  }
  const read = (directory: string, name: string) => manifests.get(join(directory, name));
  for (const [directory, names] of projects) {
    if (names.has('pyproject.toml') || names.has('setup.cfg') || names.has('setup.py'))
      roots.push(...pythonRoots(directory, read, baseFiles));
    if (names.has('package.json')) roots.push(...javascriptRoots(directory, read, baseFiles));
    if (names.has('Cargo.toml')) roots.push(...rustRoots(directory, read(directory, 'Cargo.toml')));
    if (names.has('go.mod'))
      roots.push({ ecosystem: 'go', path: directory, isFile: false, source: 'go.mod' });
  }
  // A Python project with no manifest at all: the flat layout at the repository root (pytest's rootdir).
  if (!projects.has('') && baseFiles.some((file) => !file.includes('/') && file.endsWith('.py')))
    roots.push(...flatLayout('', baseFiles, 'flat layout'));
  const unique = [
    ...new Map(roots.map((root) => [`${root.ecosystem} ${root.path}`, root])).values(),
  ];
  const describe = (root: SourceRoot) =>
    `${root.ecosystem}: ${root.path === '' ? '.' : root.path}${root.isFile ? '' : '/'} (${root.source})`;
  const rootOf = (file: string) => {
    const root = unique.find((item) => inRoot(item, file) && acceptedName(item, file));
    return root && describe(root);
  };
  return {
    roots: unique.map(describe),
    isProductCode: (file) => rootOf(file) !== undefined,
    rootOf,
    pythonImportRoots: [
      ...new Set(
        unique.filter((root) => root.ecosystem === 'python').map((root) => root.importRoot ?? ''),
      ),
    ],
  };
}

function join(directory: string, name: string): string {
  return directory === '' ? name : `${directory}/${name}`;
}

function inRoot(root: SourceRoot, file: string): boolean {
  if (root.isFile) return file === root.path;
  return root.path === '' || file.startsWith(`${root.path}/`);
}

const TEST_DIRECTORIES = new Set([
  'tests',
  'test',
  'testing',
  '__tests__',
  '__mocks__',
  '__snapshots__',
  '__fixtures__',
  'fixtures',
  'testdata',
  'spec',
]);

function isTestDirectoryName(name: string): boolean {
  return TEST_DIRECTORIES.has(name);
}

/** The file's name and directories below its root are those of source code in its ecosystem. */
function acceptedName(root: SourceRoot, file: string): boolean {
  const relative = root.path === '' || root.isFile ? file : file.slice(root.path.length + 1);
  const parts = relative.split('/');
  const name = parts.at(-1)!;
  const directories = root.isFile ? [] : parts.slice(0, -1);
  if (directories.some((part) => isTestDirectoryName(part) || part.startsWith('.'))) return false;
  if (name.startsWith('.')) return false;
  if (directories.some((part) => NOT_PROJECTS.has(part) || part === '__pycache__')) return false;
  switch (root.ecosystem) {
    case 'python':
      return (
        /\.pyi?$/.test(name) &&
        name !== 'conftest.py' &&
        !isTestFile(file) &&
        !/^(?:setup|noxfile|tasks|fabfile)\.py$/.test(name)
      );
    case 'javascript':
      return (
        isJsFile(name) &&
        !isTestFile(file) &&
        !/[._-](?:test|spec|stories)\.[^./]+$/.test(name) &&
        // Runner, bundler and lint configuration, and test setup files, whatever the tool.
        !/[.-](?:config|setup|workspace)\.[cm]?[jt]sx?$/.test(name) &&
        !/^setup-?tests?\./i.test(name)
      );
    case 'rust':
      return name.endsWith('.rs') && name !== 'tests.rs';
    case 'go':
      return name.endsWith('.go') && !name.endsWith('_test.go') && !isIgnoredByGo(relative);
  }
}

// ---------------------------------------------------------------------------------------------------
// Python: the packages and modules the manifests name, else setuptools' automatic discovery.

/** Names setuptools' flat-layout discovery never takes as packages or modules. */
const NOT_PYTHON_PACKAGES = new Set([
  'tests',
  'test',
  'testing',
  'docs',
  'doc',
  'examples',
  'example',
  'scripts',
  'tools',
  'tasks',
  'benchmarks',
  'bench',
  'build',
  'dist',
  'site',
  'venv',
  'conftest',
  'setup',
  'noxfile',
  'manage',
]);

type Read = (directory: string, name: string) => string | undefined;

function pythonRoots(directory: string, read: Read, baseFiles: readonly string[]): SourceRoot[] {
  const declared = declaredPython(read(directory, 'pyproject.toml'), read(directory, 'setup.cfg'));
  const setupPy = read(directory, 'setup.py') ?? '';
  const root = (
    relative: string,
    isFile: boolean,
    source: string,
    importFrom: string,
  ): SourceRoot => ({
    ecosystem: 'python',
    path: join(directory, relative).replace(/\/$/, ''),
    isFile,
    source,
    importRoot: join(directory, importFrom).replace(/\/$/, ''),
  });
  if (declared.packages.length > 0 || declared.modules.length > 0) {
    const base = declared.packageDir ?? '';
    return [
      ...declared.packages.map((name) => {
        const relative = join(base, name.replace(/\./g, '/'));
        const parent = path.posix.dirname(relative);
        return root(relative, false, declared.source, parent === '.' ? '' : parent);
      }),
      ...declared.modules.map((name) =>
        root(join(base, `${name}.py`), true, declared.source, base),
      ),
    ];
  }
  const where =
    declared.packageDir ??
    /find_(?:namespace_)?packages\(\s*(?:where\s*=\s*)?["']([^"']+)["']/.exec(setupPy)?.[1] ??
    /package_dir\s*=\s*\{\s*["']{2}\s*:\s*["']([^"']+)["']/.exec(setupPy)?.[1];
  const sourceDirectory = where ?? 'src';
  const inSource = join(directory, sourceDirectory) + '/';
  if (baseFiles.some((file) => file.startsWith(inSource) && file.endsWith('.py')))
    return [
      root(
        sourceDirectory,
        false,
        where ? 'declared package directory' : 'src layout',
        sourceDirectory,
      ),
    ];
  return flatLayout(directory, baseFiles, 'flat layout');
}

/** Top-level packages and modules of a flat layout, as setuptools discovers them. */
function flatLayout(directory: string, baseFiles: readonly string[], source: string): SourceRoot[] {
  const prefix = directory === '' ? '' : `${directory}/`;
  const roots = new Map<string, SourceRoot>();
  for (const file of baseFiles) {
    if (!file.startsWith(prefix) || !file.endsWith('.py')) continue;
    const parts = file.slice(prefix.length).split('/');
    const top = parts[0]!;
    const name = top.replace(/\.py$/, '');
    if (top.startsWith('.') || top.startsWith('_') || NOT_PYTHON_PACKAGES.has(name)) continue;
    if (parts.length === 1) {
      if (!isTestFile(file))
        roots.set(file, {
          ecosystem: 'python',
          path: file,
          isFile: true,
          source,
          importRoot: directory,
        });
    } else if (baseFiles.includes(`${prefix}${top}/__init__.py`)) {
      roots.set(top, {
        ecosystem: 'python',
        path: `${prefix}${top}`,
        isFile: false,
        source,
        importRoot: directory,
      });
    }
  }
  return [...roots.values()];
}

interface DeclaredPython {
  packages: string[];
  modules: string[];
  packageDir?: string;
  source: string;
}

/** Explicit package lists in pyproject.toml (setuptools, poetry, hatch) or setup.cfg. */
function declaredPython(
  pyproject: string | undefined,
  setupCfg: string | undefined,
): DeclaredPython {
  const result: DeclaredPython = { packages: [], modules: [], source: 'pyproject.toml' };
  const toml = safeToml(pyproject);
  const tool = record(toml.tool);
  const setuptools = record(tool.setuptools);
  const packageDir = record(setuptools['package-dir'])[''];
  if (typeof packageDir === 'string') result.packageDir = packageDir;
  const find = record(record(setuptools.packages).find);
  const where = strings(find.where)[0];
  if (where) result.packageDir = where;
  result.packages.push(...strings(setuptools.packages));
  result.modules.push(...strings(setuptools['py-modules']));
  for (const entry of Array.isArray(record(tool.poetry).packages)
    ? (record(tool.poetry).packages as unknown[])
    : []) {
    const include = record(entry).include;
    const from = record(entry).from;
    if (typeof include === 'string')
      result.packages.push(typeof from === 'string' ? `${from}/${include}` : include);
  }
  const hatch = record(record(record(record(tool.hatch).build).targets).wheel);
  result.packages.push(...strings(hatch.packages));
  if (result.packages.length > 0 || result.modules.length > 0 || result.packageDir) return result;
  const options = iniSection(setupCfg, 'options');
  const cfgDir = /^\s*=\s*(\S+)/m.exec(options.package_dir ?? '')?.[1];
  const cfgWhere = iniSection(setupCfg, 'options.packages.find').where?.trim();
  const listed = (value: string | undefined) =>
    (value ?? '').split(/[\s,]+/).filter((name) => name && !name.startsWith('find'));
  return {
    packages: listed(options.packages),
    modules: listed(options.py_modules),
    ...(cfgWhere || cfgDir ? { packageDir: cfgWhere || cfgDir } : {}),
    source: 'setup.cfg',
  };
}

function iniSection(text: string | undefined, section: string): Record<string, string> {
  const values: Record<string, string> = {};
  let inside = false;
  let key: string | undefined;
  for (const line of (text ?? '').split(/\r?\n/)) {
    const header = /^\[([^\]]+)\]/.exec(line);
    if (header) {
      inside = header[1]!.trim() === section;
      key = undefined;
    } else if (inside && /^\s+\S/.test(line) && key) values[key] += `\n${line.trim()}`;
    else if (inside) {
      const pair = /^([\w.-]+)\s*=\s*(.*)$/.exec(line);
      key = pair?.[1];
      if (pair) values[pair[1]!] = pair[2]!;
    }
  }
  return values;
}

/**
 * The modules a Python project registers as pytest plugins (`pytest11` entry points) in pyproject.toml
 * (`[project.entry-points.pytest11]`), setup.cfg (`[options.entry_points]`) or setup.py.
 */
export function declaredPytestPlugins(manifests: {
  pyproject?: string | undefined;
  setupCfg?: string | undefined;
  setupPy?: string | undefined;
}): string[] {
  const moduleOf = (value: string) => value.split(':')[0]!.split('[')[0]!.trim();
  const toml = record(record(safeToml(manifests.pyproject).project)['entry-points']).pytest11;
  const fromToml = Object.values(record(toml)).filter((v): v is string => typeof v === 'string');
  const cfg = iniSection(manifests.setupCfg, 'options.entry_points').pytest11 ?? '';
  const fromCfg = cfg
    .split('\n')
    .flatMap((line) => (line.includes('=') ? [line.split('=')[1]!] : []));
  const setupPy = /["']pytest11["']\s*:\s*\[([^\]]*)\]/.exec(manifests.setupPy ?? '')?.[1] ?? '';
  const fromSetupPy = [...setupPy.matchAll(/["'][^"'=]+=\s*([^"']+)["']/g)].map((m) => m[1]!);
  return [...fromToml, ...fromCfg, ...fromSetupPy].map(moduleOf).filter(Boolean);
}

// ---------------------------------------------------------------------------------------------------
// JavaScript/TypeScript: what package.json builds or exports, the tsconfig sources, src/ and lib/.

function javascriptRoots(
  directory: string,
  read: Read,
  baseFiles: readonly string[],
): SourceRoot[] {
  const manifest = record(safeJson(read(directory, 'package.json')));
  const entries: string[] = [];
  for (const key of ['main', 'module', 'browser', 'types', 'typings', 'bin', 'exports', 'files'])
    entries.push(...leaves(manifest[key]));
  // The caller hands tsconfig.json over as plain JSON (its comments and trailing commas removed).
  const tsconfig = record(safeJson(read(directory, 'tsconfig.json')));
  const compilerOptions = record(tsconfig.compilerOptions);
  const tsEntries = [
    ...strings(tsconfig.include),
    ...strings(tsconfig.files),
    ...(typeof compilerOptions.rootDir === 'string' ? [compilerOptions.rootDir] : []),
  ];
  const roots: SourceRoot[] = [];
  const add = (entry: string, source: string) => {
    const clean = path.posix.normalize(entry.replace(/^\.\//, '')).split('/');
    const globAt = clean.findIndex((part) => /[*?{[]/.test(part));
    const kept = globAt === -1 ? clean : clean.slice(0, globAt);
    if (kept.length === 0 || kept[0] === '..' || kept[0] === '.' || kept[0] === '') return;
    const top = kept[0]!;
    const full = join(directory, top);
    const isDirectory = kept.length > 1 || baseFiles.some((file) => file.startsWith(`${full}/`));
    roots.push({ ecosystem: 'javascript', path: full, isFile: !isDirectory, source });
  };
  for (const entry of entries) add(entry, 'package.json');
  for (const entry of tsEntries) add(entry, 'tsconfig.json');
  for (const conventional of ['src', 'lib', 'index.js', 'index.mjs', 'index.cjs', 'index.ts'])
    if (
      baseFiles.some(
        (file) =>
          file === join(directory, conventional) ||
          file.startsWith(`${join(directory, conventional)}/`),
      )
    )
      add(conventional, 'convention');
  return roots;
}

/** A package.json's name and the files its entry points name, for imports of the package by name. */
export function jsPackageEntries(text: string | undefined): { name?: string; entries: string[] } {
  const manifest = record(safeJson(text));
  const entries = ['main', 'module', 'exports'].flatMap((key) => leaves(manifest[key]));
  return {
    ...(typeof manifest.name === 'string' ? { name: manifest.name } : {}),
    entries: entries.length > 0 ? entries : ['index.js'],
  };
}

/** Every string inside a package.json value (exports maps nest conditions). */
function leaves(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(leaves);
  if (value && typeof value === 'object') return Object.values(value).flatMap(leaves);
  return [];
}

// ---------------------------------------------------------------------------------------------------
// Rust: each crate's src/ and the paths its targets name.

function rustRoots(directory: string, cargoToml: string | undefined): SourceRoot[] {
  const manifest = safeToml(cargoToml);
  if (!manifest.package) return []; // a virtual workspace manifest: members have their own
  const roots: SourceRoot[] = [
    { ecosystem: 'rust', path: join(directory, 'src'), isFile: false, source: 'Cargo.toml' },
  ];
  const targets = [record(manifest.lib), ...arrayOf(manifest.bin)];
  for (const target of targets) {
    const file = record(target).path;
    if (typeof file === 'string' && !file.startsWith('src/'))
      roots.push({
        ecosystem: 'rust',
        path: join(directory, file),
        isFile: true,
        source: 'Cargo.toml',
      });
  }
  return roots;
}

// ---------------------------------------------------------------------------------------------------

function safeToml(text: string | undefined): Record<string, unknown> {
  try {
    return text ? parseToml(text) : {};
  } catch {
    return {};
  }
}

/** A JSON text's value; `{}` when absent or malformed (manifests are read, never trusted to parse). */
export function safeJson(text: string | undefined): unknown {
  try {
    return text ? JSON.parse(text) : {};
  } catch {
    return {};
  }
}

/** `value` as an object, `{}` when it is none (arrays included). */
export function record(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function strings(value: unknown): string[] {
  return Array.isArray(value)
    ? value.filter((item): item is string => typeof item === 'string')
    : [];
}

function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
