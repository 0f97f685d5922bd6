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
// its pytest config does not add `src`. `--python=PATH` makes it with that interpreter (default
// `python3`), and `--site=DIR` adds DIR to it after its own packages (Debian's freezegun beside a
// newer pytest). `--version-file=PATH` commits a `__version__` module a build backend would write
// (hatch-vcs's `_version.py`) to the base.
// `--install` installs a JS project's dependencies in each clone once the change's tree is in
// place, as the Player's worktree would hold them: `npm ci` for a package-lock.json, `pnpm install
// --frozen-lockfile` for a pnpm-lock.yaml (`--pnpm=PATH`, default `pnpm`), and `npm install
// --no-package-lock` with no lock; install scripts do not run, and the npm/pnpm caches make each
// install offline after the first.
// `--keep` leaves each clone in place (its path printed) to read its records.
// `--both` also runs each commit the other way (issue 56): the commit is the base and the Player's
// change reverts it, approved with the same kind of citation. A refused honest commit is a false
// positive; an approved revert of a commit that changes tests is a miss. Each refusal is counted
// under the rule that made it (the dynamic findings by name), per repository and direction.
import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { recordPlayerReport } from '../dist/actions/record-player-report.js';
import { recordVerdict } from '../dist/actions/record-verdict.js';
import { runIndependentTests } from '../dist/actions/run-independent-tests.js';
import { openTask } from '../dist/actions/task-scope.js';
import { readEvaluation } from '../dist/evaluation/stored-evaluation.js';
import { codeOnly } from '../dist/analysis/code-only.js';
import { isSource } from '../dist/scope/product-code.js';
import { initKey } from '../dist/records/keys.js';

await initKey();
const args = process.argv.slice(2);
const COMMITS = Number(args.map((arg) => /^--commits=(\d+)$/.exec(arg)?.[1]).find(Boolean) ?? 10);
const option = (name) =>
  args.map((arg) => new RegExp(`^--${name}=(.+)$`).exec(arg)?.[1]).find(Boolean);
const EDITABLE = option('editable');
const PYTHON = option('python') ?? 'python3';
const SITE = option('site');
const VERSION_FILE = option('version-file');
const KEEP = args.includes('--keep');
const INSTALL = args.includes('--install');
const PNPM = option('pnpm') ?? 'pnpm';
// `--only=SHA,SHA` runs those commits (of whichever repository has them) instead of the last N.
const ONLY = option('only')?.split(',');
const resolves = (dir, commit) => {
  try {
    git(dir, 'cat-file', '-e', `${commit}^{commit}`);
    return true;
  } catch {
    return false;
  }
};
const WAYS = args.includes('--both') ? ['fix', 'revert'] : ['fix'];
const sources = args.filter((arg) => !arg.startsWith('--'));
const TASK = 'TASK-UPSTREAM';
// isSource follows the import reach (Python, JS/TS, Go); a crate's sources are Rust's product code.
const isCode = (file) => isSource(file) || /(?:^|\/)src\/.*\.rs$/.test(file);
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
async function citation(dir, from, to, files) {
  const collapse = (text) => text.replace(/\s+/g, ' ').trim();
  for (const file of files) {
    const candidates = git(dir, 'diff', '-U0', from, to, '--', file)
      .split('\n')
      .filter((line) => line.startsWith('+') && !line.startsWith('+++'))
      .map((line) => collapse(line.slice(1)))
      .filter((line) => line.length >= 12);
    // The file is read and parsed only when it added a line long enough to cite.
    if (candidates.length === 0) continue;
    const code = collapse(await codeOnly(file, git(dir, 'show', `${to}:${file}`)));
    const added = candidates.find((line) => code.includes(line));
    if (added) return { file, snippet: added };
  }
  return undefined;
}

/** The first code line long enough to cite in a changed product file as `rev` has it. */
async function keptLine(dir, rev, files) {
  for (const file of files.filter((name) => !/test/.test(name))) {
    const text = git(dir, 'show', `${rev}:${file}`);
    const code = (await codeOnly(file, text)).split('\n');
    const line = code.map((item) => item.trim()).find((item) => item.length >= 12);
    if (line) return { file, snippet: line };
  }
  return undefined;
}

/** The dependencies the change's lock names, installed in the clone and ignored by git. */
function installDependencies(dir) {
  const quiet = ['--ignore-scripts', '--prefer-offline'];
  const npm = ['--no-audit', '--no-fund', ...quiet];
  const [program, argv] = existsSync(path.join(dir, 'package-lock.json'))
    ? ['npm', ['ci', ...npm]]
    : existsSync(path.join(dir, 'pnpm-lock.yaml'))
      ? // The project's `packageManager` names another pnpm: this one installs it, not a switch.
        [
          PNPM,
          [
            'install',
            '--frozen-lockfile',
            '--config.manage-package-manager-versions=false',
            ...quiet,
          ],
        ]
      : ['npm', ['install', '--no-package-lock', ...npm]];
  appendFileSync(path.join(dir, '.git', 'info', 'exclude'), 'node_modules/\n');
  execFileSync(program, argv, { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** A project virtualenv as `pip install -e .` leaves it, ignored through .git/info/exclude. */
function editableVirtualenv(dir, root) {
  appendFileSync(path.join(dir, '.git', 'info', 'exclude'), '.venv/\n');
  execFileSync(PYTHON, ['-m', 'venv', '--system-site-packages', '.venv'], { cwd: dir });
  const python = path.join(dir, '.venv', 'bin', 'python');
  const purelib = 'import sysconfig; print(sysconfig.get_paths()["purelib"])';
  const site = execFileSync(python, ['-c', purelib], { encoding: 'utf8' }).trim();
  writeFileSync(path.join(site, '__editable__.project.pth'), `${path.join(dir, root)}\n`);
  if (SITE) writeFileSync(path.join(site, 'bench-site.pth'), `${SITE}\n`);
}

/** The rule a refusal reason comes from: its leading finding name, or the check it names. */
function ruleOf(reason) {
  const named = /^([a-z_]+):/.exec(reason)?.[1];
  if (named) return named;
  const checks = [
    [/^test integrity: (\w+)/, (match) => match[1]],
    [/^base tests? .* passed at the base/, () => 'PASS_TO_PASS'],
    [/^\d+ base tests .* passed at the base/, () => 'PASS_TO_PASS'],
    [/^latest test run .* has status/, () => 'own run'],
    [/^new test /, () => 'new test diverges'],
    [/^start-up point changed/, () => 'startup_changed'],
    [/^changed code the tests load/, () => 'unjudged_loaded'],
    [/^vacuous evaluation/, () => 'vacuous'],
    [/^criterion \S+ is not verified/, () => 'evidence (the citation)'],
    [/^the Player's report claims files/, () => 'report'],
    [/^null turn/, () => 'null turn'],
    [/^planted environment/, () => 'planted environment'],
    [/^environment unverified/, () => 'environment unverified'],
  ];
  for (const [pattern, name] of checks) {
    const match = pattern.exec(reason);
    if (match) return name(match);
  }
  return reason.slice(0, 40);
}

/** The base (`base` with the task file) on main, `change`'s tree in the worktree on the task's branch. */
function checkout(source, base, change, subject) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-upstream-'));
  git(os.tmpdir(), 'clone', '-q', '--no-checkout', source, dir);
  git(dir, 'checkout', '-q', '-B', 'main', base);
  const taskFile = `.guardkit/tasks/backlog/${TASK}.md`;
  mkdirSync(path.join(dir, path.dirname(taskFile)), { recursive: true });
  writeFileSync(
    path.join(dir, taskFile),
    `---\nid: ${TASK}\ntitle: Upstream\nstatus: in_progress\n---\n## Acceptance Criteria\n- [ ] AC-001: ${subject}\n`,
  );
  if (VERSION_FILE) writeFileSync(path.join(dir, VERSION_FILE), "__version__ = '0.0.0'\n");
  if (EDITABLE) editableVirtualenv(dir, EDITABLE);
  git(dir, 'add', '-A');
  if (VERSION_FILE) git(dir, 'add', '-f', VERSION_FILE);
  git(dir, 'commit', '-q', '-m', 'task');
  git(dir, 'checkout', '-q', '-b', `autobuild/${TASK}`);
  git(dir, 'checkout', '-q', change, '--', '.');
  for (const file of git(
    dir,
    'diff',
    '--name-only',
    '--no-renames',
    '--diff-filter=D',
    base,
    change,
  )
    .split('\n')
    .filter(Boolean))
    rmSync(path.join(dir, file), { force: true });
  if (INSTALL) installDependencies(dir);
  return dir;
}

/** One Coach turn: the Player's report, the run, an approval citing `cited`. */
async function turn(dir, changed, cited) {
  // A file the change deletes is not one the Player reports as written.
  const written = changed.filter((file) => existsSync(path.join(dir, file)));
  await recordPlayerReport(dir, TASK, 1, {
    files_modified: written,
    tests_written: written.filter((file) => /test/.test(file)),
    tests_passed: true,
    requirements_addressed: ['AC-001'],
  });
  const run = await runIndependentTests(dir, { task_id: TASK });
  const verdict = await recordVerdict(await openTask(dir, TASK), {
    turn: 1,
    decision: 'approve',
    rationale: 'upstream commit',
    evidence: [{ criterion: 'AC-001', ...cited }],
  }).catch((error) => ({ status: 'refused', reasons: error.details?.reasons ?? [error.message] }));
  return { run, verdict };
}

const tallies = new Map();
const tallyOf = (name, way) => {
  const key = `${name} ${way}`;
  if (!tallies.has(key))
    tallies.set(key, {
      approved: 0,
      refused: 0,
      failing: 0,
      skipped: 0,
      rules: {},
      recorded: 0,
      compared: 0,
      repeated: 0,
    });
  return tallies.get(key);
};
const refusals = [];
for (const source of sources) {
  const name = path.basename(path.dirname(source)) || path.basename(source);
  const commits = ONLY
    ? ONLY.filter((commit) => resolves(source, commit)).map((commit) =>
        git(source, 'rev-parse', commit),
      )
    : git(source, 'log', '--no-merges', '--format=%H', '-n', String(COMMITS * 40))
        .split('\n')
        .filter((commit) =>
          git(source, 'diff-tree', '--no-commit-id', '--name-only', '-r', commit)
            .split('\n')
            .some(isCode),
        )
        .slice(0, COMMITS);
  for (const commit of commits)
    for (const way of WAYS) {
      const tally = tallyOf(name, way);
      const [base, change] = way === 'fix' ? [`${commit}^`, commit] : [commit, `${commit}^`];
      const subject = git(source, 'log', '-1', '--format=%s', commit).replace(/[:#]/g, ' ');
      const label = `${name} ${commit.slice(0, 10)} ${way}`;
      const dir = checkout(source, base, change, way === 'fix' ? subject : `Revert ${subject}`);
      try {
        const changed = git(dir, 'diff', '--name-only', '--no-renames', base, change).split('\n');
        // A revert that only deletes lines has none of its own: its Coach cites a line it kept.
        const cited =
          (await citation(dir, base, change, changed.filter(isCode))) ??
          (way === 'revert' ? await keptLine(dir, change, changed.filter(isCode)) : undefined);
        if (!cited) {
          tally.skipped += 1;
          continue;
        }
        const { run, verdict } = await turn(dir, changed, cited);
        if (run.status !== 'passed') {
          tally.failing += 1;
          console.log(`${label}: its own run ${run.status}`);
        }
        // What the dynamic mechanisms saw, so a turn without findings shows they were at work.
        const stored = await readEvaluation(dir, TASK, run.run_id);
        tally.recorded += stored?.evaluation?.observation?.calls_recorded ?? 0;
        tally.compared += stored?.evaluation?.observation?.calls_compared ?? 0;
        tally.repeated += stored?.evaluation?.repetition?.tests_repeated ?? 0;
        if (verdict.status === 'approved') tally.approved += 1;
        else {
          tally.refused += 1;
          const reasons = verdict.reasons ?? [verdict.reason ?? verdict.status];
          for (const rule of new Set(reasons.map(ruleOf)))
            tally.rules[rule] = (tally.rules[rule] ?? 0) + 1;
          refusals.push(`${label}: ${reasons.join('\n')}`);
        }
        console.log(`${label}: ${verdict.status}`);
        // Printed as they come, so a run cut short still shows why.
        if (verdict.status !== 'approved') console.log(`  ${refusals.at(-1)}`);
      } finally {
        if (KEEP) console.log(`${label}: kept in ${dir}`);
        else rmSync(dir, { recursive: true, force: true });
      }
    }
}
console.log('');
for (const [key, tally] of tallies) {
  const rules = Object.entries(tally.rules).map(([rule, count]) => `${rule} ${count}`);
  console.log(
    `${key}: ${tally.approved} approved, ${tally.refused} refused${rules.length > 0 ? ` (${rules.join(', ')})` : ''}, ${tally.failing} with a failing own run (put to the approval too), ${tally.skipped} with nothing to cite; ${tally.recorded} calls recorded, ${tally.compared} replayed, ${tally.repeated} tests repeated`,
  );
}
for (const line of refusals) console.log(`  ${line.split('\n').slice(0, 12).join('\n    ')}`);
