import { describe, expect, it } from 'vitest';
import { analyzeGraph } from '../../src/graph/graph.js';
import { edgesFromBeads, edgesFromFeature, edgesFromTasks } from '../../src/graph/graph-sources.js';

const issue = (id: string, dependencies?: unknown) =>
  JSON.stringify({ id, title: `Issue ${id}`, status: 'open', priority: 2, dependencies });

const beadsJsonl = [
  issue('bd-1'),
  issue('bd-2', [
    { issue_id: 'bd-2', depends_on_id: 'bd-1', type: 'blocks', created_at: '2025-01-01T00:00:00Z' },
  ]),
  issue('bd-3', [
    { depends_on_id: 'bd-2', type: 'parent-child' },
    { depends_on_id: 'bd-1', type: 'discovered-from' },
  ]),
  '',
  issue('bd-4', [{ issue_id: 'bd-4', depends_on_id: 'bd-3', type: 'blocks' }]),
  '{"id": "bd-5", "dependencies": [',
  '   ',
  issue('bd-6', [{ depends_on_id: 'bd-4', type: 'related' }]),
  JSON.stringify({ title: 'no id' }),
  issue('bd-7', { depends_on_id: 'bd-1' }),
  issue('bd-8', [
    { depends_on_id: 'bd-1' },
    'bd-2',
    { depends_on_id: 'bd-6', issue_id: 7, type: 'blocks' },
  ]),
  issue('bd-9', [{ issue_id: 'bd-1', depends_on_id: 'bd-4', type: 'blocks' }]),
].join('\n');

describe('edgesFromBeads', () => {
  it('reads blocking dependencies and reports every unreadable line or dependency by line number', () => {
    const source = edgesFromBeads(beadsJsonl);
    expect(source.nodes).toEqual(['bd-1', 'bd-2', 'bd-3', 'bd-4', 'bd-6', 'bd-7', 'bd-8', 'bd-9']);
    expect(source.edges).toEqual([
      { from: 'bd-2', to: 'bd-1', type: 'blocks' },
      { from: 'bd-3', to: 'bd-2', type: 'parent-child' },
      { from: 'bd-4', to: 'bd-3', type: 'blocks' },
      { from: 'bd-1', to: 'bd-4', type: 'blocks' },
    ]);
    expect(source.problems).toHaveLength(6);
    expect(source.problems[0]).toMatch(/^line 6: not valid JSON \(.+\)$/);
    expect(source.problems.slice(1)).toEqual([
      'line 9: issue has no string "id"',
      'line 10: "dependencies" is not an array',
      'line 11: dependencies[0]: no string "type"',
      'line 11: dependencies[1]: not an object',
      'line 11: dependencies[2]: "issue_id" is not a string',
    ]);
  });

  it('takes issue_id, when present, as the dependent', () => {
    const report = analyzeGraph(edgesFromBeads(beadsJsonl));
    expect(report.cycles).toEqual([
      { nodes: ['bd-1', 'bd-2', 'bd-3', 'bd-4'], path: ['bd-1', 'bd-4', 'bd-3', 'bd-2', 'bd-1'] },
    ]);
  });

  it('ignores related links by default and counts them when asked', () => {
    const jsonl = [
      issue('bd-a', [{ depends_on_id: 'bd-b', type: 'blocks' }]),
      issue('bd-b', [{ depends_on_id: 'bd-a', type: 'related' }]),
    ].join('\n');
    const byDefault = edgesFromBeads(jsonl);
    expect(byDefault.edges).toEqual([{ from: 'bd-a', to: 'bd-b', type: 'blocks' }]);
    expect(analyzeGraph(byDefault).acyclic).toBe(true);

    const withRelated = edgesFromBeads(jsonl, ['blocks', 'related']);
    expect(withRelated.edges).toHaveLength(2);
    expect(analyzeGraph(withRelated).cycles.map((c) => c.path)).toEqual([['bd-a', 'bd-b', 'bd-a']]);
  });

  it('keeps dependencies on issues missing from the file, so the analysis reports them as dangling', () => {
    const source = edgesFromBeads(
      `${issue('bd-1', [{ depends_on_id: 'bd-gone', type: 'blocks' }])}\r\n`,
    );
    expect(source.problems).toEqual([]);
    expect(analyzeGraph(source).dangling).toEqual([{ from: 'bd-1', to: 'bd-gone' }]);
  });

  it('reports an issue id that appears twice', () => {
    const source = edgesFromBeads([issue('bd-1'), issue('bd-1')].join('\n'));
    expect(source.nodes).toEqual(['bd-1']);
    expect(source.problems).toEqual([
      'line 2: duplicate id bd-1 (first defined at line 1); dependencies of both are used',
    ]);
  });
});

const featureYaml = `# .guardkit/features/FEAT-A1B2.yaml
id: FEAT-A1B2
name: "User Authentication"
status: planned
tasks:
  - id: TASK-001
    name: "Create auth service skeleton"
    complexity: 3
    dependencies: []
    status: pending
  - id: TASK-002
    name: "Implement OAuth2 flow"
    dependencies: [TASK-001]
  - id: TASK-003
    name: "Add token refresh logic"
    dependencies:
      - TASK-002
  - id: TASK-004
    name: "Integration tests"
    dependencies: [TASK-001, TASK-002, TASK-003]
orchestration:
  parallel_groups:
    - [TASK-001]
    - [TASK-002, TASK-003]
`;

describe('edgesFromFeature', () => {
  it('reads task dependencies from a GuardKit feature file', () => {
    const source = edgesFromFeature(featureYaml);
    expect(source.problems).toEqual([]);
    expect(source.nodes).toEqual(['TASK-001', 'TASK-002', 'TASK-003', 'TASK-004']);
    expect(source.edges).toEqual([
      { from: 'TASK-002', to: 'TASK-001' },
      { from: 'TASK-003', to: 'TASK-002' },
      { from: 'TASK-004', to: 'TASK-001' },
      { from: 'TASK-004', to: 'TASK-002' },
      { from: 'TASK-004', to: 'TASK-003' },
    ]);
    expect(analyzeGraph(source).waves).toEqual([
      ['TASK-001'],
      ['TASK-002'],
      ['TASK-003'],
      ['TASK-004'],
    ]);
  });

  it('finds a cycle between feature tasks', () => {
    const cyclic = featureYaml.replace('dependencies: []', 'dependencies: [TASK-004]');
    const report = analyzeGraph(edgesFromFeature(cyclic));
    expect(report.acyclic).toBe(false);
    expect(report.cycles[0]!.path).toEqual(['TASK-001', 'TASK-004', 'TASK-001']);
  });

  it('reports tasks without an id and malformed dependencies', () => {
    const source = edgesFromFeature(`tasks:
  - name: "forgot the id"
    dependencies: [TASK-001]
  - id: TASK-001
    dependencies: TASK-009
  - id: TASK-002
    dependencies: [TASK-001, {nested: true}]
  - just a string
`);
    expect(source.nodes).toEqual(['TASK-001', 'TASK-002']);
    expect(source.edges).toEqual([{ from: 'TASK-002', to: 'TASK-001' }]);
    expect(source.problems).toEqual([
      'tasks[0]: task has no string "id"',
      'tasks[1]: "dependencies" of TASK-001 is not a list',
      'tasks[2].dependencies[1]: not a string id',
      'tasks[3]: not an object',
    ]);
  });

  it('reports invalid YAML with its position', () => {
    const source = edgesFromFeature(
      'tasks:\n  - id: TASK-001\n  - id: TASK-001\n    id: TASK-002\n',
    );
    expect(source.edges).toEqual([]);
    expect(source.problems).toEqual([
      'feature file: not valid YAML (Map keys must be unique at line 4, column 5)',
    ]);
  });

  it('reports a file without a tasks list', () => {
    expect(edgesFromFeature('id: FEAT-1\nname: x\n').problems).toEqual([
      'feature file: has no "tasks" list',
    ]);
    expect(edgesFromFeature('').problems).toEqual(['feature file: has no "tasks" list']);
  });
});

describe('edgesFromTasks', () => {
  it('turns parsed task front matter into edges', () => {
    const source = edgesFromTasks([
      { id: 'TASK-B', dependencies: ['TASK-A'] },
      { id: 'TASK-A', dependencies: [] },
      { id: 'TASK-C', dependencies: ['TASK-A', 'TASK-B'] },
    ]);
    expect(source.problems).toEqual([]);
    expect(source.nodes).toEqual(['TASK-B', 'TASK-A', 'TASK-C']);
    expect(analyzeGraph(source).waves).toEqual([['TASK-A'], ['TASK-B'], ['TASK-C']]);
  });

  it('reports a duplicated task id', () => {
    const source = edgesFromTasks([
      { id: 'TASK-A', dependencies: [] },
      { id: 'TASK-A', dependencies: ['TASK-B'] },
    ]);
    expect(source.problems).toEqual([
      'tasks[1]: duplicate id TASK-A (first defined at tasks[0]); dependencies of both are used',
    ]);
  });
});
