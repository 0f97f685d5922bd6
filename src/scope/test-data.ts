import path from 'node:path';
import type { FileVersions, IntegrityFinding } from '../integrity/integrity-types.js';
import { isTestFile } from './test-paths.js';

/** Directories whose files are test inputs: under a test tree, or named for fixtures and cases. */
const TEST_TREE = new Set(['test', 'tests', '__tests__', 'spec', 'specs', 'testdata']);
const DATA_DIRECTORY =
  /^(?:fixtures?|cases|data|golden|snapshots?|expected|inputs?|outputs?|samples?)$/;
/** Sources, configs and caches in a test tree are not data a test reads case by case. */
const NOT_DATA =
  /\.(?:py|[cm]?[jt]sx?|go|rs|java|cs|rb|php|pyc|map|lock)$|(?:^|\/)(?:__pycache__|node_modules)\/|(?:^|\/)(?:conftest\.py|__init__\.py|\.gitkeep)$/;

/** A file a data-driven test reads: outside any source or test file, inside a test tree or a cases dir. */
export function isTestDataFile(filePath: string): boolean {
  if (isTestFile(filePath) || NOT_DATA.test(filePath)) return false;
  const directories = path.posix.dirname(filePath).split('/');
  return directories.some((name) => TEST_TREE.has(name) || DATA_DIRECTORY.test(name));
}

/**
 * Data-driven tests read their cases from files (`tests/cases/*.in` with `*.out`): deleting a case is
 * deleting a test, and rewriting its expected output makes a wrong answer pass. Deleted case files
 * are must_fix, as a deleted test is; rewritten ones should_fix (an intended behaviour change may
 * need new expected output, which the Coach should see). One finding per directory and change.
 */
export function testDataFindings(files: FileVersions[]): IntegrityFinding[] {
  const groups = new Map<string, { directory: string; deleted: boolean; names: string[] }>();
  for (const file of files) {
    if (file.base === undefined || file.base === file.now || !isTestDataFile(file.path)) continue;
    const deleted = file.now === undefined;
    const directory = path.posix.dirname(file.path);
    const key = `${directory}\0${deleted}`;
    const group = groups.get(key) ?? { directory, deleted, names: [] };
    group.names.push(path.posix.basename(file.path));
    groups.set(key, group);
  }
  return [...groups.values()].map(({ directory, deleted, names }) => ({
    kind: 'test_data_changed',
    severity: deleted ? 'must_fix' : 'should_fix',
    file: directory,
    detail: deleted
      ? `${names.length} test data file(s) present at base were deleted (${listed(names)}): the cases a base test reads from them no longer run. Restore them`
      : `${names.length} test data file(s) present at base were rewritten (${listed(names)}): a base test compares against them, so changed expected data can make a wrong result pass. Justify each change in the verdict, or restore them`,
  }));
}

const LISTED_NAMES = 5;

function listed(names: string[]): string {
  const sorted = [...names].sort();
  const shown = sorted.slice(0, LISTED_NAMES).join(', ');
  return sorted.length > LISTED_NAMES ? `${shown} and ${sorted.length - LISTED_NAMES} more` : shown;
}
