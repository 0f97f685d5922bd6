import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function write(file: string, text: string) {
  mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
  writeFileSync(path.join(dir, file), text);
}

async function check(args: Record<string, unknown>) {
  const { client, close } = await connect({ roots: [dir] });
  try {
    return await callTool(client, 'check_graph_cycles', args);
  } finally {
    await close();
  }
}

const task = (id: string, deps: string[]) =>
  `---\nid: ${id}\ntitle: ${id}\ndepends_on: [${deps.join(', ')}]\n---\n`;

describe('check_graph_cycles through MCP', () => {
  it('finds a cycle among task files and names the edge to break', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-graph-'));
    write('.guardkit/tasks/backlog/TASK-A.md', task('TASK-A', ['TASK-C']));
    write('.guardkit/tasks/backlog/TASK-B.md', task('TASK-B', ['TASK-A']));
    write('.guardkit/tasks/in_progress/TASK-C.md', task('TASK-C', ['TASK-B', 'TASK-GONE']));
    write('tasks/TASK-D.md', task('TASK-D', []));
    execFileSync('git', ['init', '-q'], { cwd: dir });
    const result = await check({ worktree: dir });
    const data = dataOf(result);
    expect(data).toMatchObject({
      source: 'tasks',
      node_count: 4,
      acyclic: false,
      dangling: [{ from: 'TASK-C', to: 'TASK-GONE' }],
    });
    expect(data.cycles).toEqual([
      { nodes: ['TASK-A', 'TASK-B', 'TASK-C'], path: expect.arrayContaining(['TASK-A']) },
    ]);
    expect(data.cycles[0].path[0]).toBe('TASK-A');
    expect(data.cycles[0].path.at(-1)).toBe('TASK-A');
    expect(data.suggested_breaks).toHaveLength(1);
    expect(textOf(result)).toMatch(/^CYCLES: TASK-A → /);
  });

  it('returns parallel waves for an acyclic feature file and reports unreadable beads lines', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-graph-'));
    write(
      '.guardkit/features/FEAT-1.yaml',
      'id: FEAT-1\ntasks:\n  - id: T1\n    dependencies: []\n  - id: T2\n    dependencies: [T1]\n  - id: T3\n    dependencies: [T1]\n  - id: T4\n    dependencies: [T2, T3]\n',
    );
    const feature = dataOf(await check({ worktree: dir, feature_id: 'FEAT-1' }));
    expect(feature).toMatchObject({
      source: 'feature',
      acyclic: true,
      waves: [['T1'], ['T2', 'T3'], ['T4']],
    });

    write(
      '.beads/issues.jsonl',
      '{"id":"bd-1","dependencies":[{"depends_on_id":"bd-2","type":"blocks"}]}\n{not json\n{"id":"bd-2","dependencies":[{"depends_on_id":"bd-1","type":"related"}]}\n',
    );
    const beads = dataOf(await check({ worktree: dir, source: 'beads' }));
    expect(beads.acyclic).toBe(true);
    expect(beads.problems).toEqual([expect.stringMatching(/^line 2: /)]);
    const withRelated = dataOf(
      await check({ worktree: dir, source: 'beads', edge_types: ['blocks', 'related'] }),
    );
    expect(withRelated.acyclic).toBe(false);
  });

  it('analyses an explicit edge list without a worktree, including self loops and a 100k chain', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-graph-'));
    const loops = dataOf(
      await check({
        edges: [
          { from: 'x', to: 'x' },
          { from: 'y', to: 'x' },
        ],
      }),
    );
    expect(loops).toMatchObject({
      acyclic: false,
      self_loops: ['x'],
      suggested_breaks: [{ from: 'x', to: 'x' }],
    });
    const chain = Array.from({ length: 100_000 }, (_, i) => ({ from: `n${i + 1}`, to: `n${i}` }));
    const data = dataOf(await check({ edges: chain }));
    expect(data).toMatchObject({ acyclic: true, node_count: 100_001, edge_count: 100_000 });
    expect(data.waves).toHaveLength(100_001);
  });

  it('says what is missing for a source that needs files', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-graph-'));
    const result = await check({ source: 'beads' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/needs|none was given/);
    expect(textOf(await check({ worktree: dir, source: 'feature' }))).toMatch(/needs feature_id/);
  });

  it('refuses source "tasks" on a folder that is not a repository instead of answering "acyclic, 0 nodes"', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-graph-'));
    const result = await check({ worktree: dir, source: 'tasks' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/is not a git repository/);
  });

  it('reports a YAML alias bomb in a feature file as a problem of that file, not a fault', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-graph-'));
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (let level = 1; level < 9; level++)
      levels.push(
        `${'b'.repeat(level)}: &l${level} [${Array(9)
          .fill(level === 1 ? '*a' : `*l${level - 1}`)
          .join(', ')}]`,
      );
    write('.guardkit/features/FEAT-1.yaml', `${levels.join('\n')}\ntasks: []\n`);
    const result = await check({ worktree: dir, feature_id: 'FEAT-1' });
    expect(result.isError).toBeFalsy();
    expect(dataOf(result).problems).toEqual([
      expect.stringMatching(/^feature file: cannot be expanded \(Excessive alias count/),
    ]);
  });

  it.skipIf(process.platform === 'win32')(
    'refuses a FIFO named as the feature file at once instead of hanging',
    async () => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-graph-'));
      mkdirSync(path.join(dir, '.guardkit', 'features'), { recursive: true });
      execFileSync('mkfifo', [path.join(dir, '.guardkit', 'features', 'FEAT-1.yaml')]);
      const started = Date.now();
      const result = await check({ worktree: dir, feature_id: 'FEAT-1' });
      expect(result.isError).toBe(true);
      expect(Date.now() - started).toBeLessThan(5_000);
    },
  );
});
