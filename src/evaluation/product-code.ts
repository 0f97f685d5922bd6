import { lstatSync } from 'node:fs';
import path from 'node:path';
import { loadTypeScript } from '../analysis/typescript-parser.js';
import { manifestPaths, productCode, type ProductCode } from '../core/product-code.js';
import { isTestConfigFile, isTestFile, isTestSideFile } from '../core/test-paths.js';
import { changedSince, listAtCommit, readAtCommit } from '../repo/git.js';
import { STORE_PREFIX } from '../records/mirror-paths.js';

/** A path the Player changed that the trusted runs took from the base instead. */
export interface LeftOutChange {
  file: string;
  change: 'added' | 'modified' | 'deleted';
}

/** Which of the Player's changes each trusted snapshot takes, decided by the base. */
export interface TrustedSelection {
  /** The base's product-code roots, as the Coach reads them. */
  product_roots: string[];
  /** Where Python imports the product from, repository-relative: put first on each snapshot's path. */
  python_import_roots: string[];
  /** Player changes to product code (present files are copied, deleted ones removed). */
  code: string[];
  /** Left-out changes the Coach acknowledged: taken from the Player like code. */
  acknowledged: string[];
  /** Test files (and their non-infrastructure helpers) the Player added: the new-tests run's extra. */
  new_tests: string[];
  left_out: LeftOutChange[];
  base_files: Set<string>;
}

/** The product code of the base commit: its tree and its manifests as committed there. */
export async function baseProductCode(
  worktree: string,
  baseCommit: string,
  baseFiles: readonly string[],
): Promise<ProductCode> {
  const manifests = new Map<string, string>();
  await Promise.all(
    manifestPaths(baseFiles).map(async (file) => {
      const text = await readAtCommit(worktree, baseCommit, file);
      if (text !== undefined) manifests.set(file, await asPlainJson(file, text));
    }),
  );
  return productCode(baseFiles, manifests);
}

/** tsconfig.json is JSON with comments: read by TypeScript's own parser, loaded only when one exists. */
async function asPlainJson(file: string, text: string): Promise<string> {
  if (path.posix.basename(file) !== 'tsconfig.json') return text;
  const ts = await loadTypeScript();
  return JSON.stringify(ts.parseConfigFileTextToJson(file, text).config ?? {});
}

/**
 * Sorts every path that differs between the base and the working tree: product code (by the base's
 * rules) and acknowledged paths go to the trusted runs; everything else is left out and listed.
 */
export async function trustedSelection(
  worktree: string,
  baseCommit: string,
  acknowledgedPaths: readonly string[] = [],
): Promise<TrustedSelection> {
  const baseFiles = await listAtCommit(worktree, baseCommit, ['.']);
  const product = await baseProductCode(worktree, baseCommit, baseFiles);
  const base = new Set(baseFiles);
  const selection: TrustedSelection = {
    product_roots: product.roots,
    python_import_roots: product.pythonImportRoots,
    code: [],
    acknowledged: [],
    new_tests: [],
    left_out: [],
    base_files: base,
  };
  for (const file of await changedSince(worktree, baseCommit)) {
    if (file.startsWith(STORE_PREFIX)) continue;
    const change = !lstatSync(path.join(worktree, file), { throwIfNoEntry: false })
      ? 'deleted'
      : base.has(file)
        ? 'modified'
        : 'added';
    if (product.isProductCode(file)) selection.code.push(file);
    else if (acknowledgedPaths.some((entry) => coversPath(entry, file)))
      selection.acknowledged.push(file);
    else {
      if (change === 'added' && isPlayerTest(file)) selection.new_tests.push(file);
      selection.left_out.push({ file, change });
    }
  }
  return selection;
}

/** An acknowledgement names a file, or a directory (`data/` or `data`) covering the files below it. */
export function coversPath(entry: string, file: string): boolean {
  const clean = entry.replace(/^\.\//, '').replace(/\/+$/, '');
  return file === clean || file.startsWith(`${clean}/`);
}

/**
 * A test or test helper the Player added, which the new-tests run may take: never test infrastructure
 * (conftest.py, setup files, runner config), which stays the base's.
 */
function isPlayerTest(file: string): boolean {
  const name = path.posix.basename(file);
  if (isTestConfigFile(file) || name === 'conftest.py') return false;
  if (/^(?:setup-?tests|(?:vitest|jest)\.setup)\./i.test(name)) return false;
  return isTestFile(file) || isTestSideFile(file);
}
