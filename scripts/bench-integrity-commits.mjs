#!/usr/bin/env node
// check_test_integrity on real upstream test-refactor commits (issue 18, item 8: <= 2 unjustified
// must_fix findings). Per listed commit, in a scratch clone: the base is the commit's first parent
// plus a task file (and a `toolchain.test` when the entry gives one), the task branch holds the
// commit's changes; run_independent_tests, then check_test_integrity static (dynamic: false) and
// dynamic. Prints the static and dynamic must_fix counts, how many findings a successor explained
// (replaced_by) and each must_fix left, with its rule and test.
// The repositories are not in this repo: clone them first (the list names them), then
//   npx tsc -p tsconfig.json && node scripts/bench-integrity-commits.mjs [bench/integrity-commits.json]
// A list entry: { repo_dir, commit, note, test?, node_modules? } — `test` becomes toolchain.test,
// `node_modules` is linked into the scratch clone (a JS project's installed devDependencies).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const listFile = path.resolve(
  process.argv[2] ?? path.join(here, '..', 'bench', 'integrity-commits.json'),
);
const entries = JSON.parse(readFileSync(listFile, 'utf8'));
const missing = entries.filter((entry) => !existsSync(path.join(entry.repo_dir, '.git')));
if (missing.length > 0) {
  console.log(
    `Missing repositories (clone them first; nothing was run):\n${missing
      .map((entry) => `  ${entry.repo_dir} (for ${entry.commit}: ${entry.note})`)
      .join('\n')}`,
  );
  process.exit(0);
}

// The records of these throw-away tasks go to a throw-away state directory, and pytest starts
// without the machine's entry-point plugins (as the test suite runs it).
const state = mkdtempSync(path.join(os.tmpdir(), 'coachgate-bench-state-'));
process.env.COACHGATE_STATE_DIR = state;
process.env.PYTEST_DISABLE_PLUGIN_AUTOLOAD = '1';
const { initKey } = await import('../dist/records/keys.js');
const { recordPlayerReport } = await import('../dist/actions/record-player-report.js');
const { runIndependentTests } = await import('../dist/actions/run-independent-tests.js');
const { checkTestIntegrity } = await import('../dist/actions/check-test-integrity.js');
await initKey();

const TASK = 'TASK-BENCH-REFACTOR';
const TASK_FILE = `---\nid: ${TASK}\ntitle: Test refactor\nstatus: in_progress\n---\n## Acceptance Criteria\n- [ ] AC-001: the tests are reorganised, none lost\n`;
const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@example.invalid',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@example.invalid',
};

/** A scratch clone: main = the commit's first parent + the task, the task branch = + the commit. */
function scratchClone(entry) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-bench-commit-'));
  const git = (...args) =>
    execFileSync('git', args, { cwd: dir, env: GIT_ENV, maxBuffer: 1 << 28 }).toString();
  git('clone', '-q', '--no-checkout', path.resolve(entry.repo_dir), '.');
  const commit = git('rev-parse', entry.commit).trim();
  git('checkout', '-q', '-B', 'main', `${commit}^1`);
  mkdirSync(path.join(dir, '.guardkit/tasks/backlog'), { recursive: true });
  writeFileSync(path.join(dir, `.guardkit/tasks/backlog/${TASK}.md`), TASK_FILE);
  if (entry.test) {
    const quoted = JSON.stringify(entry.test);
    writeFileSync(path.join(dir, '.guardkit/config.yaml'), `toolchain:\n  test: ${quoted}\n`);
  }
  git('add', '-f', '.guardkit');
  git('commit', '-q', '-m', 'coachgate task');
  git('checkout', '-q', '-b', `autobuild/${TASK}`);
  const diff = execFileSync('git', ['diff', '--binary', '-M', `${commit}^1`, commit], {
    cwd: dir,
    maxBuffer: 1 << 28,
  });
  execFileSync('git', ['apply', '--index'], { cwd: dir, input: diff });
  git('commit', '-q', '-m', `upstream ${commit}`);
  if (entry.node_modules)
    symlinkSync(path.resolve(entry.node_modules), path.join(dir, 'node_modules'));
  return { dir, commit, files: git('diff', '--name-only', 'main', 'HEAD').trim().split('\n') };
}

const mustFix = (findings) => findings.filter((finding) => finding.severity === 'must_fix');
const rows = [];
for (const entry of entries) {
  const { dir, commit, files } = scratchClone(entry);
  try {
    await recordPlayerReport(dir, TASK, 1, {
      files_modified: files,
      tests_written: files,
      tests_passed: true,
      requirements_addressed: ['AC-001'],
    });
    const run = await runIndependentTests(dir, { task_id: TASK });
    const staticCheck = await checkTestIntegrity(dir, TASK, undefined, { dynamic: false });
    const dynamic = await checkTestIntegrity(dir, TASK);
    // Findings the runs turned into explanations, and the gone tests whose successor passed.
    const info = dynamic.findings.filter((finding) => finding.severity === 'info');
    const explained = info.length;
    const paired = info.reduce((total, finding) => total + (finding.replaced_by?.length ?? 0), 0);
    const left = mustFix(dynamic.findings);
    rows.push({ static: staticCheck.must_fix, dynamic: dynamic.must_fix, explained, paired });
    console.log(
      `\n${path.basename(entry.repo_dir)} ${commit.slice(0, 10)} (${entry.note})\n` +
        `  run: ${run.status}, ${run.counts.total} tests (${run.tests_source ?? 'ids'}); ` +
        `dynamic verdict: ${dynamic.dynamic_verdict.state}\n` +
        `  static must_fix ${staticCheck.must_fix}, dynamic must_fix ${dynamic.must_fix}, ` +
        `made info ${explained} (gone tests paired with a passing successor: ${paired})`,
    );
    if (dynamic.dynamic_verdict.state === 'not_run')
      console.log(`  ${dynamic.dynamic_verdict.detail}`);
    for (const finding of left) {
      const where = finding.test ?? finding.not_replaced?.join(', ') ?? '';
      console.log(
        `  - ${finding.kind} ${finding.file} ${where} [${finding.trusted_run?.outcome ?? 'static'}]`,
      );
      if (process.env.VERBOSE)
        console.log(`      ${finding.trusted_run?.detail ?? finding.detail}`);
    }
  } catch (error) {
    console.log(`\n${entry.repo_dir} ${entry.commit}: failed: ${error?.stack ?? error}`);
  } finally {
    if (!process.env.KEEP) rmSync(dir, { recursive: true, force: true });
    else console.log(`  kept ${dir}`);
  }
}
const sum = (key) => rows.reduce((total, row) => total + row[key], 0);
console.log(
  `\ntotal over ${rows.length} commit(s): static must_fix ${sum('static')}, dynamic must_fix ` +
    `${sum('dynamic')}, made info ${sum('explained')}, paired gone tests ${sum('paired')}`,
);
rmSync(state, { recursive: true, force: true });
