#!/usr/bin/env node
// What the trusted runs would take from real upstream commits: for the last N commits of each
// repository that change a source file, the commit's parent is the base and the commit is the
// Player's change; trustedSelection (src/scope/product-code.ts) sorts its files. An honest
// upstream change should be judged: a commit whose changed source files are all left out
// (vacuous: the approval would be refused) or whose changed product files the base's rules call
// test support (left out of the trusted runs) is counted and listed.
// `--both` also sorts each commit's revert (the commit is the base, its parent the change), as
// bench-approval-commits.mjs runs it: the Player that undoes a fix must be judged too.
// The repositories are not in this repo: give their git directories (a `fetch`ed mirror, a clone):
//   npx tsc -p tsconfig.json && node scripts/bench-selection-commits.mjs [--commits=N] DIR...
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { trustedSelection } from '../dist/scope/product-code.js';
import { isVacuous } from '../dist/evaluation/evaluate.js';

const args = process.argv.slice(2);
const COMMITS = Number(args.map((arg) => /^--commits=(\d+)$/.exec(arg)?.[1]).find(Boolean) ?? 30);
const WAYS = args.includes('--both') ? ['fix', 'revert'] : ['fix'];
const sources = args.filter((arg) => !arg.startsWith('--'));
const git = (cwd, ...argv) =>
  execFileSync('git', argv, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).trim();
const SOURCE = /\.(?:py|go|rs|[cm]?[jt]sx?)$/;

let total = 0;
const flagged = [];
for (const source of sources) {
  const name = path.basename(path.dirname(source)) || path.basename(source);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-selection-'));
  try {
    git(os.tmpdir(), 'clone', '-q', '--no-checkout', source, dir);
    const commits = git(dir, 'log', '--no-merges', '--format=%H', '-n', String(COMMITS * 3), 'HEAD')
      .split('\n')
      .filter((commit) =>
        git(dir, 'diff-tree', '--no-commit-id', '--name-only', '-r', commit)
          .split('\n')
          .some((file) => SOURCE.test(file)),
      )
      .slice(0, COMMITS);
    let taken = 0;
    for (const commit of commits)
      for (const way of WAYS) {
        const [base, change] = way === 'fix' ? [`${commit}^`, commit] : [commit, `${commit}^`];
        git(dir, 'checkout', '-q', '--force', change);
        git(dir, 'clean', '-qfdx');
        const selection = await trustedSelection(dir, base);
        total += 1;
        if (selection.code.length > 0) taken += 1;
        const problems = [
          ...(isVacuous(selection) ? [`vacuous: ${selection.unjudged_code.join(', ')}`] : []),
          ...selection.test_support
            .filter((file) => !/(?:^|\/)(?:tests?|testing)\//.test(file))
            .map((file) => `test support: ${file}`),
        ];
        if (problems.length > 0)
          flagged.push(`${name} ${commit.slice(0, 10)} ${way}: ${problems.join('; ')}`);
      }
    console.log(
      `${name}: ${commits.length} commits ${WAYS.join(' and ')}, ${taken} with product code taken`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log(`\n${total} commits, ${flagged.length} flagged`);
for (const line of flagged) console.log(`  ${line}`);
