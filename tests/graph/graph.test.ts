import { describe, expect, it } from 'vitest';
import { analyzeGraph, type DependencyEdge, type GraphReport } from '../../src/graph/graph.js';

const edge = (from: string, to: string): DependencyEdge => ({ from, to });
const ring = (ids: string[]): DependencyEdge[] =>
  ids.map((id, i) => edge(id, ids[(i + 1) % ids.length]!));

/** Small deterministic PRNG (mulberry32) so random graphs are reproducible. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffled<T>(items: T[], random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

function randomGraph(random: () => number, nodeCount: number, edgeCount: number): DependencyEdge[] {
  const pick = () => `t${Math.floor(random() * nodeCount)}`;
  return Array.from({ length: edgeCount }, () => edge(pick(), pick()));
}

/** Every reported cycle is a real closed walk over existing edges, inside its component. */
function expectCyclesAreReal(report: GraphReport, edges: DependencyEdge[]): void {
  const present = new Set(edges.map((e) => `${e.from}\u0000${e.to}`));
  for (const { nodes, path } of report.cycles) {
    expect(path[0]).toBe(nodes[0]);
    expect(path.at(-1)).toBe(path[0]);
    for (let i = 0; i + 1 < path.length; i++) {
      expect(present.has(`${path[i]}\u0000${path[i + 1]}`)).toBe(true);
      expect(nodes).toContain(path[i]);
    }
  }
}

/** Waves respect every dependency and each node sits in the earliest wave its dependencies allow. */
function expectWavesAreLayers(report: GraphReport, edges: DependencyEdge[]): void {
  const waveOf = new Map<string, number>();
  report.waves.forEach((wave, index) => wave.forEach((id) => waveOf.set(id, index)));
  expect(waveOf.size).toBe(report.node_count);
  const deepestDependency = new Map<string, number>();
  for (const { from, to } of edges) {
    expect(waveOf.get(to)!).toBeLessThan(waveOf.get(from)!);
    deepestDependency.set(from, Math.max(deepestDependency.get(from) ?? -1, waveOf.get(to)!));
  }
  for (const [id, wave] of waveOf) expect(wave).toBe((deepestDependency.get(id) ?? -1) + 1);
}

function withoutBreaks(edges: DependencyEdge[], report: GraphReport): DependencyEdge[] {
  const cut = new Set(report.suggested_breaks.map((e) => `${e.from}\u0000${e.to}`));
  return edges.filter((e) => !cut.has(`${e.from}\u0000${e.to}`));
}

describe('analyzeGraph: cycles', () => {
  it('reports a self loop as a self loop, not as a component cycle', () => {
    const report = analyzeGraph({ edges: [edge('A', 'A'), edge('A', 'B')] });
    expect(report.acyclic).toBe(false);
    expect(report.self_loops).toEqual(['A']);
    expect(report.cycles).toEqual([]);
    expect(report.waves).toEqual([]);
    expect(report.suggested_breaks).toEqual([{ from: 'A', to: 'A' }]);
  });

  it.each([[['A', 'B']], [['C', 'A', 'B']], [['D', 'B', 'A', 'C']]])(
    'finds the cycle %j and closes its path at the smallest id',
    (ids) => {
      const edges = [...ring(ids), edge('Z', ids[0]!)];
      const report = analyzeGraph({ edges });
      const sorted = [...ids].sort();
      expect(report.acyclic).toBe(false);
      expect(report.cycles).toHaveLength(1);
      expect(report.cycles[0]!.nodes).toEqual(sorted);
      expect(report.cycles[0]!.path).toHaveLength(ids.length + 1);
      expect(report.cycles[0]!.path[0]).toBe('A');
      expectCyclesAreReal(report, edges);
      expect(report.self_loops).toEqual([]);
      expect(report.waves).toEqual([]);
    },
  );

  it('gives the exact witness for a three-node cycle', () => {
    const report = analyzeGraph({ edges: [edge('B', 'C'), edge('C', 'A'), edge('A', 'B')] });
    expect(report.cycles).toEqual([{ nodes: ['A', 'B', 'C'], path: ['A', 'B', 'C', 'A'] }]);
    expect(report.suggested_breaks).toEqual([{ from: 'C', to: 'A' }]);
  });

  it('reports two disjoint cycles separately, sorted by smallest id', () => {
    const edges = [...ring(['Y', 'X']), ...ring(['M', 'N', 'O']), edge('N', 'X')];
    const report = analyzeGraph({ edges });
    expect(report.cycles.map((c) => c.nodes)).toEqual([
      ['M', 'N', 'O'],
      ['X', 'Y'],
    ]);
    expect(report.suggested_breaks).toHaveLength(2);
    expectCyclesAreReal(report, edges);
  });

  it('takes the shortest way back to the start, preferring smaller ids on ties', () => {
    const edges = [...ring(['A', 'B', 'C', 'D']), edge('A', 'C'), edge('A', 'E'), edge('E', 'A')];
    const report = analyzeGraph({ edges });
    expect(report.cycles).toEqual([{ nodes: ['A', 'B', 'C', 'D', 'E'], path: ['A', 'E', 'A'] }]);
  });

  it('does not see a cycle in diamonds', () => {
    const edges = [
      edge('A', 'B'),
      edge('A', 'C'),
      edge('B', 'D'),
      edge('C', 'D'),
      edge('E', 'B'),
      edge('E', 'D'),
    ];
    const report = analyzeGraph({ edges });
    expect(report.acyclic).toBe(true);
    expect(report.cycles).toEqual([]);
    expect(report.suggested_breaks).toEqual([]);
    expect(report.waves).toEqual([['D'], ['B', 'C'], ['A', 'E']]);
    expectWavesAreLayers(report, edges);
  });

  it('finds the same components as brute-force reachability on random graphs', () => {
    const random = prng(7);
    for (let round = 0; round < 200; round++) {
      const nodeCount = 1 + Math.floor(random() * 10);
      const edges = randomGraph(random, nodeCount, Math.floor(random() * 2.5 * nodeCount));
      const report = analyzeGraph({ edges });
      const ids = [...new Set(edges.flatMap((e) => [e.from, e.to]))].sort();
      const reach = new Map(ids.map((id) => [id, new Set<string>()]));
      for (const e of edges) reach.get(e.from)!.add(e.to);
      for (const k of ids)
        for (const i of ids)
          if (reach.get(i)!.has(k)) for (const j of reach.get(k)!) reach.get(i)!.add(j);
      const expected = ids
        .filter((id) =>
          ids.some(
            (other) => other !== id && reach.get(id)!.has(other) && reach.get(other)!.has(id),
          ),
        )
        .map((id) =>
          ids.filter(
            (other) => other === id || (reach.get(id)!.has(other) && reach.get(other)!.has(id)),
          ),
        )
        .filter((members, index, all) => all.findIndex((m) => m[0] === members[0]) === index)
        .sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
      expect(report.cycles.map((c) => c.nodes)).toEqual(expected);
      expect(report.self_loops).toEqual(
        [...new Set(edges.filter((e) => e.from === e.to).map((e) => e.from))].sort(),
      );
      expectCyclesAreReal(report, edges);
      if (report.acyclic) expectWavesAreLayers(report, edges);
      else expect(report.waves).toEqual([]);
    }
  });
});

describe('analyzeGraph: suggested breaks', () => {
  it('removing the suggested edges makes a graph of simple cycles acyclic', () => {
    const edges = [
      ...ring(['A', 'B']),
      ...ring(['C', 'D', 'E']),
      ...ring(['F', 'G', 'H', 'I']),
      edge('J', 'J'),
      edge('K', 'A'),
      edge('C', 'K'),
      edge('L', 'M'),
    ];
    const report = analyzeGraph({ edges });
    expect(report.suggested_breaks).toHaveLength(4);
    const rerun = analyzeGraph({ edges: withoutBreaks(edges, report) });
    expect(rerun.acyclic).toBe(true);
    expect(rerun.edge_count).toBe(report.edge_count - 4);
  });

  it('breaks the witness cycle of a tangled component; re-running surfaces what remains', () => {
    const edges = [...ring(['A', 'B']), ...ring(['B', 'C'])];
    const first = analyzeGraph({ edges });
    expect(first.cycles).toEqual([{ nodes: ['A', 'B', 'C'], path: ['A', 'B', 'A'] }]);
    expect(first.suggested_breaks).toEqual([{ from: 'B', to: 'A' }]);
    const second = analyzeGraph({ edges: withoutBreaks(edges, first) });
    expect(second.cycles).toEqual([{ nodes: ['B', 'C'], path: ['B', 'C', 'B'] }]);
    expect(
      analyzeGraph({ edges: withoutBreaks(withoutBreaks(edges, first), second) }).acyclic,
    ).toBe(true);
  });
});

describe('analyzeGraph: nodes, dangling and duplicates', () => {
  it('reports edges to or from unknown nodes as dangling and leaves them out of the analysis', () => {
    const report = analyzeGraph({
      nodes: ['A', 'B', 'Lonely'],
      edges: [edge('A', 'B'), edge('A', 'X'), edge('X', 'A'), edge('A', 'X'), edge('Y', 'B')],
    });
    expect(report.dangling).toEqual([edge('A', 'X'), edge('X', 'A'), edge('Y', 'B')]);
    expect(report.acyclic).toBe(true);
    expect(report.node_count).toBe(3);
    expect(report.edge_count).toBe(1);
    expect(report.waves).toEqual([['B', 'Lonely'], ['A']]);
  });

  it('treats every endpoint as a node when nodes are omitted', () => {
    const report = analyzeGraph({ edges: [edge('A', 'X')] });
    expect(report.dangling).toEqual([]);
    expect(report.node_count).toBe(2);
    expect(report.waves).toEqual([['X'], ['A']]);
  });

  it('counts duplicate edges and nodes once, whatever their type', () => {
    const report = analyzeGraph({
      nodes: ['A', 'B', 'A'],
      edges: [
        edge('A', 'B'),
        { from: 'A', to: 'B', type: 'blocks' },
        { from: 'A', to: 'B', type: 'parent-child' },
      ],
    });
    expect(report.node_count).toBe(2);
    expect(report.edge_count).toBe(1);
  });

  it('handles an empty graph', () => {
    expect(analyzeGraph({ edges: [] })).toEqual({
      node_count: 0,
      edge_count: 0,
      acyclic: true,
      cycles: [],
      self_loops: [],
      dangling: [],
      waves: [],
      suggested_breaks: [],
    });
  });
});

describe('analyzeGraph: determinism', () => {
  it('gives an identical report for shuffled nodes and edges', () => {
    const random = prng(42);
    const edges = [...randomGraph(random, 300, 420), edge('t1', 't1'), edge('t5', 'ghost')];
    const nodes = Array.from({ length: 300 }, (_, i) => `t${i}`);
    const report = analyzeGraph({ nodes, edges });
    expect(report.cycles.length).toBeGreaterThan(0);
    expect(report.dangling).toEqual([edge('t5', 'ghost')]);
    for (let round = 0; round < 5; round++) {
      expect(
        analyzeGraph({ nodes: shuffled(nodes, random), edges: shuffled(edges, random) }),
      ).toEqual(report);
    }
  });

  it('orders ids by plain string comparison, not by locale or number', () => {
    const report = analyzeGraph({
      edges: [edge('b', 'a'), edge('B', 'a'), edge('10', 'a'), edge('9', 'a')],
    });
    expect(report.waves).toEqual([['a'], ['10', '9', 'B', 'b']]);
  });
});

describe('analyzeGraph: large graphs without recursion', () => {
  const size = 100_000;
  const ids = Array.from({ length: size }, (_, i) => `n${String(i).padStart(6, '0')}`);

  it('walks a 100,000-node chain into 100,000 waves', () => {
    const edges = ids.slice(1).map((id, i) => edge(id, ids[i]!));
    const report = analyzeGraph({ edges: shuffled(edges, prng(1)) });
    expect(report.acyclic).toBe(true);
    expect(report.edge_count).toBe(size - 1);
    expect(report.waves).toHaveLength(size);
    expect(report.waves.every((wave, index) => wave.length === 1 && wave[0] === ids[index])).toBe(
      true,
    );
  });

  it('finds a 100,000-node ring as one cycle, broken by its suggested edge', () => {
    const edges = ring(ids);
    const report = analyzeGraph({ edges });
    expect(report.cycles).toHaveLength(1);
    expect(report.cycles[0]!.nodes).toEqual(ids);
    expect(report.cycles[0]!.path).toEqual([...ids, ids[0]]);
    expect(report.suggested_breaks).toEqual([edge(ids[size - 1]!, ids[0]!)]);
    const rerun = analyzeGraph({ edges: withoutBreaks(edges, report) });
    expect(rerun.acyclic).toBe(true);
    expect(rerun.waves).toHaveLength(size);
  });
});
