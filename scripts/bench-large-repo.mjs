#!/usr/bin/env node
// A turn on a large repository through a real stdio server: a small pytest project inside a
// generated tree of BENCH_LARGE_FILES files (default 50,000; half of them test data under tests/)
// and one BENCH_LARGE_MB-MB file (default 200), against the same turn on a 500-file tree. Prints the
// time of run_independent_tests, check_test_integrity and an approval (record_verdict), and the
// server's peak memory (VmHWM), for each. Targets (issue 60): no failure, memory under 500 MB, time
// within 2x the 500-file turn plus the extra test time.
// BENCH_PROFILE=DIR writes each server's CPU profile there (node --cpu-prof), to find the hot spots.
// Needs a build first: `npm run build`, then `node scripts/bench-large-repo.mjs`.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const FILES = Number(process.env.BENCH_LARGE_FILES ?? 50_000);
const BIG_MB = Number(process.env.BENCH_LARGE_MB ?? 200);
const CLI = new URL('../bundle/cli.js', import.meta.url).pathname;
const TASK = 'TASK-BENCH-LARGE';
const PROFILE = process.env.BENCH_PROFILE
  ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]
  : [];

const PROJECT = {
  'pytest.ini': '[pytest]\npythonpath = .\ntestpaths = tests\n',
  'app/__init__.py': '',
  'app/text.py': 'def slug(text):\n    return text.lower().replace(" ", "-")\n',
  'tests/test_text.py':
    'from app.text import slug\n\n\ndef test_spaces():\n    assert slug("A B") == "a-b"\n',
  [`.guardkit/tasks/backlog/${TASK}.md`]: `---\nid: ${TASK}\ntitle: Shout\n---\n## Acceptance Criteria\n- [ ] AC-001: shout(text) shouts\n`,
};
const PLAYER = {
  'app/text.py': `${PROJECT['app/text.py']}\n\ndef shout(text):\n    return text.upper() + "!"\n`,
  'tests/test_shout.py':
    'from app.text import shout\n\n\ndef test_shout():\n    assert shout("hi") == "HI!"\n',
};

function write(dir, files) {
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
}

/** The project plus `count` generated files (half test data, half product data), committed. */
function repository(count, bigMb) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-bench-large-'));
  const env = { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@example.invalid' };
  env.GIT_COMMITTER_NAME = env.GIT_AUTHOR_NAME;
  env.GIT_COMMITTER_EMAIL = env.GIT_AUTHOR_EMAIL;
  const git = (...args) => execFileSync('git', args, { cwd: dir, env, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  write(dir, PROJECT);
  for (let index = 0; index < count; index += 1) {
    const folder = index % 2 === 0 ? 'tests/data' : 'assets';
    const file = path.join(dir, folder, `d${Math.floor(index / 1000)}`, `f${index}.txt`);
    if (index % 1000 < 2) mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, `generated file ${index}\n`);
  }
  if (bigMb > 0) {
    const chunk = Buffer.alloc(1024 * 1024, 'coachgate large file\n');
    const parts = Array.from({ length: bigMb }, () => chunk);
    writeFileSync(path.join(dir, 'assets', 'large.bin'), Buffer.concat(parts));
  }
  git('add', '-A');
  git('commit', '-q', '-m', 'base');
  git('checkout', '-q', '-b', `autobuild/${TASK}`);
  write(dir, PLAYER);
  return dir;
}

function peakMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)[1]) / 1024;
}

async function turn(label, count, bigMb) {
  const dir = repository(count, bigMb);
  const state = mkdtempSync(path.join(os.tmpdir(), 'coachgate-bench-state-'));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...PROFILE, CLI, '--root', dir, '--state-dir', state],
    stderr: 'ignore',
  });
  const client = new Client({ name: 'bench-large-repo', version: '0' });
  await client.connect(transport);
  const task = { worktree: dir, task_id: TASK };
  const row = { label, files: count + Object.keys(PROJECT).length, big_mb: bigMb };
  const timed = async (name, args) => {
    const started = performance.now();
    const result = await client.callTool({ name, arguments: { ...task, ...args } }, undefined, {
      timeout: 1_800_000,
    });
    row[`${name}_s`] = ((performance.now() - started) / 1000).toFixed(1);
    row[`${name}_peak_mb`] = Math.round(peakMb(transport.pid));
    if (result.isError) row[`${name}_error`] = result.content[0].text.slice(0, 200);
    return result;
  };
  try {
    await client.callTool({
      name: 'record_player_report',
      arguments: {
        ...task,
        turn: 1,
        report: { files_modified: Object.keys(PLAYER), tests_passed: true },
      },
    });
    await timed('run_independent_tests', {});
    await timed('check_test_integrity', {});
    await timed('record_verdict', {
      turn: 1,
      decision: 'approve',
      rationale: 'shout works',
      evidence: [{ criterion: 'AC-001', test: 'test_shout' }],
    });
  } finally {
    await client.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(state, { recursive: true, force: true });
  }
  return row;
}

const rows = [await turn('500 files', 500, 0), await turn('large', FILES, BIG_MB)];
console.table(rows);
