#!/usr/bin/env node
// A whole Coach turn on real upstream commits, as an honest Player's change: for the last N commits
// of each repository that change a product source file, the commit's parent is the base (with a
// task file) and the commit is the Player's work. run_independent_tests, then record_verdict
// approve citing an added line of the changed product file. An honest commit whose own tests pass
// should be approved: each refusal is printed with its reason, so a rule that refuses honest work
// shows here before it lands. A commit whose own run fails is counted apart and still put to the
// approval: failures its base shares are pre-existing.
// The repositories are not in this repo: give their git directories (a `fetch`ed mirror, a clone),
// ones whose dependencies are installed, since the runs are offline:
//   npx tsc -p tsconfig.json && node scripts/bench-approval-commits.mjs [--commits=N] DIR...
// `--editable=src` gives each clone a project virtualenv (`.venv`, with the system's packages)
// whose `.pth` puts the clone's `src/` on sys.path, as `pip install -e .` leaves a src layout: the
// commonest Python set-up, and the only way a src-layout project's tests import its own code when
// its pytest config does not add `src`.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { recordPlayerReport } from '../dist/actions/record-player-report.js';
import { recordVerdict } from '../dist/actions/record-verdict.js';
import { runIndependentTests } from '../dist/actions/run-independent-tests.js';
import { openTask } from '../dist/actions/task-scope.js';
import { codeOnly } from '../dist/analysis/code-only.js';
import { isSource } from '../dist/scope/product-code.js';
import { initKey } from '../dist/records/keys.js';

await initKey();
const args = process.argv.slice(2);
const COMMITS = Number(args.map((arg) => /^--commits=(\d+)$/.exec(arg)?.[1]).find(Boolean) ?? 10);
const EDITABLE = args.map((arg) => /^--editable=(.+)$/.exec(arg)?.[1]).find(Boolean);
const sources = args.filter((arg) => !arg.startsWith('--'));
const TASK = 'TASK-UPSTREAM';
const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'b',
  GIT_AUTHOR_EMAIL: 'b@x',
  GIT_COMMITTER_NAME: 'b',
  GIT_COMMITTER_EMAIL: 'b@x',
};
const git = (cwd, ...argv) =>
  execFileSync('git', argv, { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20 }).trim();

/**
 * The first added line of a changed product file that is code and long enough to cite: a Coach
 * that cites a docstring or a comment is refused whatever the change (cite the code that does it).
 */
async function citation(dir, commit, files) {
  const collapse = (text) => text.replace(/\s+/g, ' ').trim();
  for (const file of files) {
    const candidates = git(dir, 'diff', '-U0', `${commit}^`, commit, '--', file)
      .split('\n')
      .filter((line) => line.startsWith('+') && !line.startsWith('+++'))
      .map((line) => collapse(line.slice(1)))
      .filter((line) => line.length >= 12);
    // The file is read and parsed only when it added a line long enough to cite.
    if (candidates.length === 0) continue;
    const code = collapse(await codeOnly(file, git(dir, 'show', `${commit}:${file}`)));
    const added = candidates.find((line) => code.includes(line));
    if (added) return { file, snippet: added };
  }
  return undefined;
}

/** A project virtualenv as `pip install -e .` leaves it, ignored through .git/info/exclude. */
function editableVirtualenv(dir, root) {
  writeFileSync(path.join(dir, '.git', 'info', 'exclude'), '.venv/\n');
  execFileSync('python3', ['-m', 'venv', '--system-site-packages', '.venv'], { cwd: dir });
  const python = path.join(dir, '.venv', 'bin', 'python');
  const purelib = 'import sysconfig; print(sysconfig.get_paths()["purelib"])';
  const site = execFileSync(python, ['-c', purelib], { encoding: 'utf8' }).trim();
  writeFileSync(path.join(site, '__editable__.project.pth'), `${path.join(dir, root)}\n`);
}

const tally = { approved: 0, refused: 0, failing: 0, skipped: 0 };
const refusals = [];
for (const source of sources) {
  const name = path.basename(path.dirname(source)) || path.basename(source);
  const commits = git(source, 'log', '--no-merges', '--format=%H', '-n', String(COMMITS * 4))
    .split('\n')
    .filter((commit) =>
      git(source, 'diff-tree', '--no-commit-id', '--name-only', '-r', commit)
        .split('\n')
        .some(isSource),
    )
    .slice(0, COMMITS);
  for (const commit of commits) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-upstream-'));
    try {
      git(os.tmpdir(), 'clone', '-q', '--no-checkout', source, dir);
      git(dir, 'checkout', '-q', '-B', 'main', `${commit}^`);
      const taskFile = `.guardkit/tasks/backlog/${TASK}.md`;
      const subject = git(dir, 'log', '-1', '--format=%s', commit).replace(/[:#]/g, ' ');
      mkdirSync(path.join(dir, path.dirname(taskFile)), { recursive: true });
      writeFileSync(
        path.join(dir, taskFile),
        `---\nid: ${TASK}\ntitle: Upstream\nstatus: in_progress\n---\n## Acceptance Criteria\n- [ ] AC-001: ${subject}\n`,
      );
      if (EDITABLE) editableVirtualenv(dir, EDITABLE);
      git(dir, 'add', '-A');
      git(dir, 'commit', '-q', '-m', 'task');
      git(dir, 'checkout', '-q', '-b', `autobuild/${TASK}`);
      git(dir, 'checkout', '-q', commit, '--', '.');
      for (const file of git(dir, 'diff', '--name-only', '--diff-filter=D', `${commit}^`, commit)
        .split('\n')
        .filter(Boolean))
        rmSync(path.join(dir, file), { force: true });
      const changed = git(dir, 'diff', '--name-only', `${commit}^`, commit).split('\n');
      const cited = await citation(dir, commit, changed.filter(isSource));
      if (!cited) {
        tally.skipped += 1;
        continue;
      }
      await recordPlayerReport(dir, TASK, 1, {
        files_modified: changed,
        tests_written: changed.filter((file) => /test/.test(file)),
        tests_passed: true,
        requirements_addressed: ['AC-001'],
      });
      const run = await runIndependentTests(dir, { task_id: TASK });
      if (run.status !== 'passed') {
        tally.failing += 1;
        console.log(`${name} ${commit.slice(0, 10)}: its own run ${run.status}`);
      }
      const verdict = await recordVerdict(await openTask(dir, TASK), {
        turn: 1,
        decision: 'approve',
        rationale: 'upstream commit',
        evidence: [{ criterion: 'AC-001', ...cited }],
      }).catch((error) => ({ status: 'refused', reason: error.message }));
      if (verdict.status === 'approved') tally.approved += 1;
      else {
        tally.refused += 1;
        refusals.push(`${name} ${commit.slice(0, 10)}: ${verdict.reason ?? verdict.status}`);
      }
      console.log(`${name} ${commit.slice(0, 10)}: ${verdict.status}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
console.log(
  `\n${tally.approved} approved, ${tally.refused} refused, ${tally.failing} with a failing own run (put to the approval too), ${tally.skipped} with nothing to cite`,
);
for (const line of refusals) console.log(`  ${line.split('\n').slice(0, 12).join('\n    ')}`);
