import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  definesJavascriptAssertion,
  definesPythonAssertion,
} from '../analysis/assertion-helper.js';
import { ALIAS_CONFIG, importAliases } from '../analysis/import-aliases.js';
import { goImports } from '../analysis/imports/go.js';
import { javascriptImports } from '../analysis/imports/javascript.js';
import { pythonImports } from '../analysis/imports/python.js';
import { loadTypeScript } from '../analysis/typescript-parser.js';
import {
  followImports,
  importLanguage,
  type CodeUnderTest,
  type FileImports,
  type ImportIndex,
} from './import-reach.js';
import { isOutsideSource, jsPackageEntries } from './product-code-rules.js';
import { isTestFile, isTestSideFile } from './test-paths.js';
import { readManyAtCommit } from '../repo/git.js';

/** The base's code under test, per base commit: a pinned base is walked once per server process. */
const byBase = new Map<string, Promise<CodeUnderTest>>();

/** What the base's tests reach through their imports, at `baseCommit` (src/scope/import-reach.ts). */
export function baseCodeUnderTest(
  worktree: string,
  baseCommit: string,
  baseFiles: readonly string[],
): Promise<CodeUnderTest> {
  const key = `${baseCommit}\0${path.resolve(worktree)}`;
  let walked = byBase.get(key);
  if (!walked) {
    const read = (files: string[]) => readManyAtCommit(worktree, baseCommit, files);
    walked = walk(baseFiles, read);
    // A failed read is not cached: the next approval asks git again.
    walked.catch(() => byBase.delete(key));
    byBase.set(key, walked);
  }
  return walked;
}

/**
 * What the worktree's tests (the base's and the Player's) reach, on the Player's files: how a file the
 * Player added becomes code under test (its new test, or its changed product code, imports it).
 */
export function worktreeCodeUnderTest(
  worktree: string,
  workingFiles: readonly string[],
): Promise<CodeUnderTest> {
  const read = async (files: string[]) => {
    const texts = new Map<string, string>();
    await Promise.all(
      files.map(async (file) => {
        const text = await readFile(path.join(worktree, file), 'utf8').catch(() => undefined);
        if (text !== undefined) texts.set(file, text);
      }),
    );
    return texts;
  };
  return walk(workingFiles, read);
}

/**
 * Every base file that one of `starts` reaches through its imports (the starts themselves only when
 * another start imports them): which modules the product's own code uses, asked only when a
 * source root holds a module that imports a test framework (src/scope/product-code.ts).
 */
export async function baseReachFrom(
  worktree: string,
  baseCommit: string,
  baseFiles: readonly string[],
  starts: readonly string[],
): Promise<Set<string>> {
  const read = (files: string[]) => readManyAtCommit(worktree, baseCommit, files);
  const reach = await walk(baseFiles, read, starts);
  return new Set([...reach.code.keys(), ...reach.support.keys()]);
}

async function walk(
  allFiles: readonly string[],
  read: (files: string[]) => Promise<Map<string, string>>,
  from?: readonly string[],
): Promise<CodeUnderTest> {
  const files = allFiles.filter((file) => !isOutsideSource(file));
  const tests =
    from ??
    files.filter(
      (file) => importLanguage(file) !== undefined && (isTestFile(file) || isTestSideFile(file)),
    );
  if (tests.length === 0)
    return { code: new Map(), support: new Map(), assertionHelpers: new Set() };
  const hasJavascript = files.some((file) => importLanguage(file) === 'javascript');
  if (hasJavascript) await loadTypeScript();
  const index = await importIndex(files, read, hasJavascript);
  return followImports(tests, index, read, parseImports);
}

function parseImports(file: string, text: string): FileImports | undefined {
  switch (importLanguage(file)) {
    case 'python':
      return {
        language: 'python',
        imports: pythonImports(text),
        assertionHelper: definesPythonAssertion(text),
      };
    case 'go':
      return { language: 'go', packages: goImports(text) };
    case 'javascript':
      try {
        const specifiers = javascriptImports(text);
        const assertionHelper = definesJavascriptAssertion(text, specifiers);
        return { language: 'javascript', specifiers, assertionHelper };
      } catch {
        return undefined;
      }
    case undefined:
      return undefined;
  }
}

/** Python's search roots and the repository's own JS packages, from the tree and its config files. */
async function importIndex(
  files: readonly string[],
  read: (files: string[]) => Promise<Map<string, string>>,
  hasJavascript: boolean,
): Promise<ImportIndex> {
  const directories = new Set<string>();
  for (const file of files)
    for (let dir = path.posix.dirname(file); dir !== '.'; dir = path.posix.dirname(dir))
      directories.add(dir);
  const configs = files.filter(
    (file) =>
      PYTEST_CONFIG.test(file) ||
      file.endsWith('package.json') ||
      path.posix.basename(file) === 'go.mod' ||
      (hasJavascript && ALIAS_CONFIG.test(file)),
  );
  const texts = await read(configs);
  const pythonRoots = new Set(
    ['', 'src', 'lib'].filter((dir) => dir === '' || directories.has(dir)),
  );
  const jsPackages = new Map<string, { directory: string; entries: string[] }>();
  const goModules = new Map<string, string>();
  for (const [file, text] of texts) {
    const directory = path.posix.dirname(file) === '.' ? '' : path.posix.dirname(file);
    const goModule = /^module\s+"?([^\s"]+)"?/m.exec(text);
    if (path.posix.basename(file) === 'go.mod' && goModule) goModules.set(goModule[1]!, directory);
    if (file.endsWith('package.json')) {
      const found = jsPackageEntries(text);
      if (found.name) jsPackages.set(found.name, { directory, entries: found.entries });
    }
    if (PYTEST_CONFIG.test(file))
      for (const entry of pytestPythonPath(text))
        pythonRoots.add(
          path.posix.normalize(path.posix.join(directory, entry)).replace(/^\.$/, ''),
        );
  }
  const aliases = hasJavascript ? importAliases(texts) : [];
  return {
    files: new Set(files),
    directories,
    pythonRoots: [...pythonRoots],
    jsPackages,
    aliases,
    goModules,
  };
}

const PYTEST_CONFIG = /(?:^|\/)(?:pytest\.ini|tox\.ini|setup\.cfg|pyproject\.toml)$/;

/** pytest's `pythonpath` setting (ini or TOML): the directories it puts on sys.path. */
function pytestPythonPath(text: string): string[] {
  const match = /^[ \t]*pythonpath[ \t]*=[ \t]*(.*(?:\n[ \t]+\S.*)*)/m.exec(text);
  if (!match) return [];
  return match[1]!
    .split(/[\s,[\]]+/)
    .map((entry) => entry.replace(/^["']|["']$/g, ''))
    .filter((entry) => entry !== '' && !entry.startsWith('#'));
}
