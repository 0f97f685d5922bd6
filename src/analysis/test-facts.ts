import type {
  BaseAndNow,
  ConfigSettings,
  FileVersions,
  TestFileFacts,
} from '../integrity/integrity.js';
import { isJsFile, needsTestFacts, testConfigKind } from '../scope/test-paths.js';
import { extractConfigSettings } from './config-settings.js';
import { extractJsTestFacts } from './js-test-facts.js';
import { scanTestFactsByLine } from './line-scan-test-facts.js';
import { loadTypeScript } from './typescript-parser.js';
import { extractPythonTestFacts } from './python-test-facts.js';
import { serverPython } from '../runner/pyenv.js';
import type { SandboxPolicy } from '../config/sandbox-policy.js';
import type { SourceFile } from './source-text.js';
export type { SourceFile } from './source-text.js';

export interface TestFactsOptions {
  /** Interpreter used for Python's `ast` (default `python3`). */
  python?: string;
  /** The base config's sandbox policy, which confines that interpreter (a virtualenv's .pth runs). */
  sandbox: SandboxPolicy;
}

/**
 * Test facts per path: Python through python3's `ast` (one process for the batch), JS/TS through the
 * TypeScript parser, Go and Rust by line scan. Files in other languages are left out.
 */
export async function extractTestFacts(
  files: SourceFile[],
  options: TestFactsOptions,
): Promise<Map<string, TestFileFacts>> {
  const facts = await testFactsInOrder(files, options);
  return new Map(
    files.flatMap((file, index) => {
      const fileFacts = facts[index];
      return fileFacts === undefined ? [] : [[file.path, fileFacts] as const];
    }),
  );
}

/** Facts for each file, in input order, so the same path can appear twice (base and now) in one batch. */
async function testFactsInOrder(
  files: SourceFile[],
  options: TestFactsOptions,
): Promise<(TestFileFacts | undefined)[]> {
  const python = files.filter((file) => file.path.endsWith('.py'));
  const pythonFacts =
    python.length === 0
      ? []
      : await extractPythonTestFacts(
          python,
          options.python ?? (await serverPython()),
          options.sandbox,
        );
  if (files.some((file) => isJsFile(file.path))) await loadTypeScript();
  let nextPython = 0;
  return files.map((file) => {
    if (file.path.endsWith('.py')) return pythonFacts[nextPython++];
    if (isJsFile(file.path)) return extractJsTestFacts(file.path, file.text);
    if (file.path.endsWith('.go') || file.path.endsWith('.rs'))
      return scanTestFactsByLine(file.path, file.text);
    return undefined;
  });
}

export interface IntegrityFacts {
  facts: Map<string, BaseAndNow<TestFileFacts>>;
  config_settings: Map<string, BaseAndNow<ConfigSettings>>;
}

/** Everything `findIntegrityIssues` needs to know about the changed files' contents, base and now. */
export async function collectIntegrityFacts(
  files: FileVersions[],
  options: TestFactsOptions,
): Promise<IntegrityFacts> {
  const testSources = files.filter((file) => needsTestFacts(file.path));
  const sides = testSources.flatMap((file) =>
    (['base', 'now'] as const).flatMap((side) => {
      const text = file[side];
      return text === undefined ? [] : [{ path: file.path, text, side, file }];
    }),
  );
  const sideFacts = await testFactsInOrder(sides, options);
  const parsed = new Map<FileVersions, BaseAndNow<TestFileFacts>>();
  sides.forEach(({ file, side }, index) =>
    parsed.set(file, { ...parsed.get(file), [side]: sideFacts[index] }),
  );
  const facts = new Map<string, BaseAndNow<TestFileFacts>>();
  for (const file of testSources)
    facts.set(file.path, comparablePair(file, parsed.get(file)?.base, parsed.get(file)?.now));
  const config_settings = new Map<string, BaseAndNow<ConfigSettings>>();
  const configs = files.filter((f) => testConfigKind(f.path) !== undefined);
  if (configs.some((file) => testConfigKind(file.path) === 'js_runner_config'))
    await loadTypeScript();
  for (const file of configs) {
    config_settings.set(file.path, {
      ...(file.base === undefined ? {} : { base: extractConfigSettings(file.path, file.base) }),
      ...(file.now === undefined ? {} : { now: extractConfigSettings(file.path, file.now) }),
    });
  }
  return { facts, config_settings };
}

/**
 * When only one side fell back to the line scan, scan the other side the same way: the parser and the
 * scan count slightly differently, and comparing one with the other would report differences nobody made.
 */
function comparablePair(
  file: FileVersions,
  base: TestFileFacts | undefined,
  now: TestFileFacts | undefined,
): BaseAndNow<TestFileFacts> {
  const reason =
    base?.fallback_reason !== undefined && now?.parser !== 'line_scan'
      ? `${base.fallback_reason}, in the base version`
      : now?.fallback_reason !== undefined && base?.parser !== 'line_scan'
        ? `${now.fallback_reason}, in the current version`
        : undefined;
  const rescan = (facts: TestFileFacts | undefined, text: string | undefined) =>
    reason === undefined || facts === undefined || text === undefined
      ? facts
      : scanTestFactsByLine(file.path, text, reason);
  const pair: BaseAndNow<TestFileFacts> = {};
  const comparableBase = rescan(base, file.base);
  const comparableNow = rescan(now, file.now);
  if (comparableBase !== undefined) pair.base = comparableBase;
  if (comparableNow !== undefined) pair.now = comparableNow;
  return pair;
}
