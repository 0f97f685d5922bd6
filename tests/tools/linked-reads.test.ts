import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import { makeRepo, SAMPLE_TASK, type TempRepo } from '../helpers/git-repo.js';

// What a Player links to: a file of the machine outside the worktree, which no answer may repeat.
const SECRET = 'SECRET-7f3a';
let repo: TempRepo;
let outside: string;
beforeEach(() => {
  repo = makeRepo({ '.guardkit/tasks/TASK-001.md': SAMPLE_TASK });
  outside = mkdtempSync(path.join(os.tmpdir(), 'coachgate-outside-'));
});
afterEach(() => {
  repo.remove();
  rmSync(outside, { recursive: true, force: true });
});

/** `relative` in the worktree made a link to `target`. */
function link(relative: string, target: string): void {
  mkdirSync(path.dirname(path.join(repo.dir, relative)), { recursive: true });
  symlinkSync(target, path.join(repo.dir, relative));
}

function outsideFile(name: string, text: string): string {
  const file = path.join(outside, name);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

async function call(name: string, args: Record<string, unknown>) {
  const { client, close } = await connect({ roots: [repo.dir] });
  try {
    return await callTool(client, name, { worktree: repo.dir, ...args });
  } finally {
    await close();
  }
}

const everything = (result: Awaited<ReturnType<typeof call>>) => JSON.stringify(result);
const results = '.guardkit/autobuild/TASK-001/task_work_results.json';

describe('reads of Player-writable files stay inside the worktree', () => {
  it('read_task_work_results refuses a report linked outside, JSON or not, and echoes none of it', async () => {
    for (const text of [
      JSON.stringify({ implementation_notes: SECRET, files_created: [SECRET] }),
      `${SECRET}:x:0:0:root:/root:/bin/bash\n`,
    ]) {
      rmSync(path.join(repo.dir, results), { force: true });
      link(results, outsideFile('report.json', text));
      const result = await call('read_task_work_results', { task_id: 'TASK-001' });
      const data = dataOf(result);
      expect(data).toMatchObject({ found: true, results: null });
      expect(data.problems.join('\n')).toContain('leads outside the worktree');
      expect(everything(result)).not.toContain(SECRET);
    }
  });

  it('read_task_work_results still reads a report linked to a file inside the worktree', async () => {
    repo.write('notes/report.json', JSON.stringify({ files_created: ['README.md'] }));
    repo.write('README.md', 'hi\n');
    link(results, path.join(repo.dir, 'notes/report.json'));
    const data = dataOf(await call('read_task_work_results', { task_id: 'TASK-001' }));
    expect(data).toMatchObject({ found: true, honesty: { verified: true } });
  });

  it('check_graph_cycles refuses a linked .guardkit/features and a task file linked outside', async () => {
    outsideFile('features/FEAT-1.yaml', `tasks:\n  - id: ${SECRET}\n    dependencies: []\n`);
    link('.guardkit/features', path.join(outside, 'features'));
    const feature = await call('check_graph_cycles', { feature_id: 'FEAT-1' });
    expect(feature.isError).toBe(true);
    expect(textOf(feature)).toContain(
      'Refusing to read .guardkit/features/FEAT-1.yaml: it is a link (or lies under one) that leads outside the worktree.',
    );
    expect(everything(feature)).not.toContain(SECRET);

    const task = `---\nid: ${SECRET}\ntitle: planted\n---\n`;
    link('.guardkit/tasks/TASK-009.md', outsideFile('TASK-009.md', task));
    const tasks = await call('check_graph_cycles', { source: 'tasks' });
    const data = dataOf(tasks);
    expect(data.node_count).toBe(1);
    expect(data.problems).toEqual([
      expect.stringContaining('Refusing to read .guardkit/tasks/TASK-009.md'),
    ]);
    expect(everything(tasks)).not.toContain(SECRET);
  });

  it('run_independent_tests refuses a project manifest linked outside, and says which', async () => {
    const manifests: [string, string][] = [
      ['package.json', JSON.stringify({ scripts: { test: `node -e "${SECRET}"` } })],
      ['setup.cfg', `[alias]\ntest = python -m unittest ${SECRET}\n`],
    ];
    for (const [name, text] of manifests) {
      link(name, outsideFile(name, text));
      const result = await call('run_independent_tests', {});
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain(
        `Refusing to read ${name}: it is a link (or lies under one) that leads outside the worktree.`,
      );
      expect(everything(result)).not.toContain(SECRET);
      rmSync(path.join(repo.dir, name));
    }
  });

  it('run_independent_tests still reads a manifest linked to a file inside the worktree', async () => {
    repo.write('config/package.json', JSON.stringify({ scripts: { test: 'node -e ""' } }));
    link('package.json', path.join(repo.dir, 'config/package.json'));
    const data = dataOf(await call('run_independent_tests', {}));
    expect(data).toMatchObject({ status: 'passed' });
    expect(data.detected_by).toMatch(/^package.json scripts.test/);
  });

  it('check_graph_cycles refuses a beads file linked outside', async () => {
    const issue = { id: SECRET, status: 'open', dependencies: [] };
    link('.beads/issues.jsonl', outsideFile('issues.jsonl', `${JSON.stringify(issue)}\n`));
    const beads = await call('check_graph_cycles', { source: 'beads' });
    expect(beads.isError).toBe(true);
    expect(textOf(beads)).toContain('Refusing to read .beads/issues.jsonl');
    expect(everything(beads)).not.toContain(SECRET);
  });
});
