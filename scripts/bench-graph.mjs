#!/usr/bin/env node
// Times analyzeGraph on random sparse graphs and chains of 10k, 100k and 1M edges (plus a 1M-edge
// graph containing a cycle) and prints the time per edge relative to the 10k baseline measured in
// this same process: ratios near 1 mean the analysis grows linearly.
// Needs a build first: `npx tsc -p .`, then `node scripts/bench-graph.mjs`.
import { performance } from 'node:perf_hooks';
import { analyzeGraph } from '../dist/graph/graph.js';

const SIZES = [10_000, 100_000, 1_000_000];
const RUNS = 3;
/** Random graphs get this many nodes per edge: sparse, like real task graphs. */
const NODES_PER_EDGE = 0.5;

/** mulberry32: a tiny seeded PRNG, so every run measures the same graphs. */
function prng(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const id = (i) => `task-${i}`;

/** Edges only from higher to lower numbers, so the graph is acyclic. */
function randomDag(edgeCount, seed) {
  const random = prng(seed);
  const nodeCount = Math.ceil(edgeCount * NODES_PER_EDGE);
  const edges = [];
  while (edges.length < edgeCount) {
    const a = Math.floor(random() * nodeCount);
    const b = Math.floor(random() * nodeCount);
    if (a !== b) edges.push({ from: id(Math.max(a, b)), to: id(Math.min(a, b)) });
  }
  return edges;
}

function chain(edgeCount) {
  return Array.from({ length: edgeCount }, (_, i) => ({ from: id(i + 1), to: id(i) }));
}

/** A random DAG whose last edge closes a long cycle through a chain of the lowest-numbered nodes. */
function randomWithCycle(edgeCount, seed) {
  const ringLength = 1_000;
  const edges = randomDag(edgeCount - ringLength, seed);
  for (let i = 1; i < ringLength; i++) edges.push({ from: id(i), to: id(i - 1) });
  edges.push({ from: id(0), to: id(ringLength - 1) });
  return edges;
}

function bestOf(edges) {
  let best = Infinity;
  let report;
  for (let run = 0; run < RUNS; run++) {
    const start = performance.now();
    report = analyzeGraph({ edges });
    best = Math.min(best, performance.now() - start);
  }
  return { ms: best, report };
}

// `family` names the 10k case whose time per edge is the baseline; the first case of a family is 10k.
const cases = [
  ...SIZES.map((size) => ({
    kind: 'random DAG',
    family: 'random',
    size,
    build: () => randomDag(size, size),
  })),
  ...SIZES.map((size) => ({ kind: 'chain', family: 'chain', size, build: () => chain(size) })),
  {
    kind: 'random + cycle',
    family: 'random',
    size: 1_000_000,
    build: () => randomWithCycle(1_000_000, 99),
  },
];

const baselinePerEdge = new Map();
const rows = [];
for (const { kind, family, size, build } of cases) {
  const { ms, report } = bestOf(build());
  const perEdge = ms / size;
  if (!baselinePerEdge.has(family)) baselinePerEdge.set(family, perEdge);
  const baseline = baselinePerEdge.get(family);
  rows.push({
    graph: kind,
    edges: size.toLocaleString('en-US'),
    nodes: report.node_count.toLocaleString('en-US'),
    'best ms': ms.toFixed(1),
    'ns/edge': (perEdge * 1e6).toFixed(0),
    'vs 10k': (perEdge / baseline).toFixed(2),
    acyclic: String(report.acyclic),
    cycles: String(report.cycles.length),
    waves: String(report.waves.length),
  });
}

printTable(rows);
console.log(
  `\nbest of ${RUNS} runs; "vs 10k" = time per edge divided by the 10k-edge time per edge of the same kind`,
);
console.log(
  '(the cyclic graph is compared with the random DAG baseline); about 1 means linear growth.',
);

function printTable(records) {
  const columns = Object.keys(records[0]);
  const widths = columns.map((c) => Math.max(c.length, ...records.map((r) => r[c].length)));
  const line = (cells) =>
    cells.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
  console.log(line(columns));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const record of records) console.log(line(columns.map((c) => record[c])));
}
