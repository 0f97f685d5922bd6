import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { analyzeGraph } from '../../src/graph/graph.js';
import { edgesFromBeads } from '../../src/graph/graph-sources.js';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import type { TempRepo } from '../helpers/git-repo.js';
import { BAD_GREET, greetingProject } from '../helpers/node-project.js';
import { CLI as cli } from '../helpers/cli.js';

/** One issue line as `bd export` (bd 1.x, cmd/bd/export.go) prints it: `_type`, the issue, its dependencies. */
const exported = (id: string, dependsOn: string[] = []) =>
  JSON.stringify({
    _type: 'issue',
    id,
    title: id,
    status: 'open',
    priority: 2,
    issue_type: 'task',
    created_at: '2026-11-01T10:00:00Z',
    updated_at: '2026-11-01T10:00:00Z',
    dependencies: dependsOn.map((to) => ({
      issue_id: id,
      depends_on_id: to,
      type: 'blocks',
      created_at: '2026-11-01T10:00:00Z',
      created_by: 'ada',
    })),
    dependency_count: dependsOn.length,
    dependent_count: 0,
    comment_count: 0,
  });

const cleanups: (() => void)[] = [];
const originalPath = process.env.PATH;
afterEach(() => {
  process.env.PATH = originalPath;
  while (cleanups.length > 0) cleanups.pop()!();
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * No real bd can run here (`npm install @beads/bd@1.3.0` downloads its binary in a postinstall step, and
 * this machine has no network), so these tests put a stand-in `bd` first on PATH: a shell script that
 * answers `bd export` with the given lines, or fails like bd outside a beads project.
 */
function standInBd(lines: string[] | { fail: string }): void {
  const bin = tempDir('coachgate-bd-');
  const body =
    'fail' in lines
      ? `echo ${JSON.stringify(lines.fail)} >&2\nexit 1`
      : `cat <<'JSONL'\n${lines.join('\n')}\nJSONL`;
  writeFileSync(
    path.join(bin, 'bd'),
    `#!/bin/sh\n[ "$1" = export ] || { echo "stand-in bd only exports" >&2; exit 2; }\n${body}\n`,
  );
  chmodSync(path.join(bin, 'bd'), 0o755);
  process.env.PATH = `${bin}${path.delimiter}${originalPath}`;
}

async function graph(worktree: string) {
  const { client, close } = await connect({ roots: [worktree] });
  try {
    return await callTool(client, 'check_graph_cycles', { worktree, source: 'beads' });
  } finally {
    await close();
  }
}

describe('beads graph from bd export when .beads/issues.jsonl is absent', () => {
  it('reads export lines and skips non-issue records such as memories', () => {
    const text = [
      exported('bd-a1', ['bd-b2']),
      exported('bd-b2', ['bd-a1']),
      JSON.stringify({ _type: 'memory', key: 'style', value: 'tabs' }),
    ].join('\n');
    const source = edgesFromBeads(text);
    expect(source.problems).toEqual([]);
    expect(source.nodes).toEqual(['bd-a1', 'bd-b2']);
    expect(analyzeGraph(source).acyclic).toBe(false);
  });

  it('finds a cycle through a stand-in `bd export` on PATH (no real bd here), via MCP', async () => {
    const worktree = tempDir('coachgate-beads-');
    mkdirSync(path.join(worktree, '.beads'));
    standInBd([
      exported('bd-a1', ['bd-c3']),
      exported('bd-b2', ['bd-a1']),
      exported('bd-c3', ['bd-b2']),
    ]);
    const data = dataOf(await graph(worktree));
    expect(data).toMatchObject({ source: 'beads', node_count: 3, acyclic: false, problems: [] });
    expect(data.cycles[0].nodes).toEqual(['bd-a1', 'bd-b2', 'bd-c3']);
  });

  it('says how to install bd or write the JSONL when bd is missing, and passes on bd errors', async () => {
    const worktree = tempDir('coachgate-beads-');
    process.env.PATH = tempDir('coachgate-empty-bin-');
    const missing = await graph(worktree);
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(
      /\.beads\/issues\.jsonl does not exist[\s\S]*`bd` command is not installed[\s\S]*npm install -g @beads\/bd[\s\S]*bd export -o \.beads\/issues\.jsonl/,
    );
    standInBd({ fail: 'Error: no beads database found' });
    const failing = await graph(worktree);
    expect(failing.isError).toBe(true);
    expect(textOf(failing)).toMatch(
      /`bd export` failed[\s\S]*exit 1[\s\S]*no beads database found/,
    );
  });
});

describe('review.md for bead tasks under .beads/artifacts/<BEAD>/', () => {
  let repo: TempRepo | undefined;
  afterEach(() => repo?.remove());

  async function feedbackVerdict(project: TempRepo) {
    const { client, close } = await connect({ roots: [project.dir] });
    const call = (name: string, args: Record<string, unknown>) =>
      callTool(client, name, { worktree: project.dir, task_id: 'TASK-042', ...args });
    try {
      await call('run_independent_tests', {});
      const verdict = await call('record_verdict', {
        turn: 1,
        decision: 'feedback',
        rationale: 'greeting is wrong',
        issues: [{ severity: 'must_fix', category: 'tests', description: 'say Hello' }],
      });
      expect(verdict.isError).toBeFalsy();
      return dataOf(await call('task_status', {}));
    } finally {
      await close();
    }
  }

  it('writes the review copy for a task that is a bead (stand-in bd), and the run stays fresh', async () => {
    repo = greetingProject(BAD_GREET);
    mkdirSync(path.join(repo.dir, '.beads'));
    standInBd([exported('TASK-042', ['bd-other']), exported('bd-other', ['TASK-042'])]);
    const status = await feedbackVerdict(repo);
    const copy = path.join(repo.dir, '.beads/artifacts/TASK-042/review.md');
    expect(readFileSync(copy, 'utf8')).toBe(
      readFileSync(path.join(repo.dir, '.guardkit/autobuild/TASK-042/review.md'), 'utf8'),
    );
    expect(readFileSync(copy, 'utf8')).toMatch(/^Verdict: NOT_APPROVED$/m);
    // The copy is the server's writing, not the Player's work: the run still describes the tree.
    expect(status.latest_run.fresh).toBe(true);
    // The gate checks the graph the bead belongs to: the beads graph, here with a cycle.
    const gate = spawnSync(
      process.execPath,
      [cli, 'gate', '--task', 'TASK-042', '--worktree', repo.dir, '--format', 'text'],
      { encoding: 'utf8' },
    );
    expect(gate.stdout).toMatch(
      /graph health: fail — 1 dependency cycle\(s\): (TASK-042|bd-other) → /,
    );
    expect(gate.status).toBe(1);
  });

  it('writes no copy for a task the beads graph does not list, nor through a planted link', async () => {
    repo = greetingProject(BAD_GREET);
    mkdirSync(path.join(repo.dir, '.beads'));
    standInBd([exported('bd-other')]);
    await feedbackVerdict(repo);
    expect(existsSync(path.join(repo.dir, '.beads/artifacts'))).toBe(false);
    repo.remove();

    repo = greetingProject(BAD_GREET);
    const outside = tempDir('coachgate-outside-');
    mkdirSync(path.join(repo.dir, '.beads/artifacts'), { recursive: true });
    symlinkSync(outside, path.join(repo.dir, '.beads/artifacts/TASK-042'));
    standInBd([exported('TASK-042')]);
    const status = await feedbackVerdict(repo);
    expect(status.strikes).toBe(1);
    expect(existsSync(path.join(outside, 'review.md'))).toBe(false);
  });
});
