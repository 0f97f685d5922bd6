/**
 * Dependency-graph analysis: cycles (strongly connected components), self loops, dangling references,
 * topological waves and one suggested edge to cut per cycle.
 *
 * Everything runs on integer node indices in typed arrays, with iterative traversals only, so a
 * 100,000-node chain or a million edges neither overflow the call stack nor allocate per-edge objects.
 * Node indices are ranks in plain string order, so "smallest id" is "smallest index" and the result
 * does not depend on the order of the input.
 */

/** `from` depends on `to`: `to` has to be done before `from`. */
export interface DependencyEdge {
  from: string;
  to: string;
  type?: string;
}

export interface GraphEdge {
  from: string;
  to: string;
}

export interface GraphCycle {
  /** Members of the strongly connected component, sorted. */
  nodes: string[];
  /** A closed walk through the component starting and ending at its smallest id, e.g. ['A','B','C','A']. */
  path: string[];
}

export interface GraphReport {
  node_count: number;
  /** Distinct edges between known nodes (self loops included, dangling edges not). */
  edge_count: number;
  acyclic: boolean;
  /** One witness cycle per strongly connected component of two or more nodes, sorted by smallest id. */
  cycles: GraphCycle[];
  self_loops: string[];
  /** Edges naming a node outside the given `nodes`; left out of the analysis. */
  dangling: GraphEdge[];
  /** Topological layers when acyclic (wave 0 = nodes without dependencies); [] when cyclic. */
  waves: string[][];
  /** One edge per cycle and per self loop whose removal breaks that cycle. */
  suggested_breaks: GraphEdge[];
}

export interface GraphInput {
  /** Known node ids; when omitted every edge endpoint is a node. */
  nodes?: string[];
  edges: DependencyEdge[];
}

/** Successor lists in compressed form: node v's successors are targets[offsets[v] .. offsets[v+1]). */
interface Adjacency {
  offsets: Int32Array;
  targets: Int32Array;
}

export function analyzeGraph(input: GraphInput): GraphReport {
  const { ids, froms, tos, dangling } = indexGraph(input);
  const { successors, selfLoops, edgeCount } = buildAdjacency(ids.length, froms, tos);

  const components = stronglyConnectedComponents(successors);
  const cycles = witnessCycles(successors, components).map((cycle) => ({
    nodes: idsOf(cycle.members, ids),
    path: idsOf(cycle.path, ids),
  }));
  const acyclic = cycles.length === 0 && selfLoops.length === 0;

  const suggestedBreaks: GraphEdge[] = [
    ...cycles.map(({ path }) => ({ from: path[path.length - 2], to: path[0] })),
    ...selfLoops.map((v) => ({ from: ids[v], to: ids[v] })),
  ];
  suggestedBreaks.sort(compareEdges);

  return {
    node_count: ids.length,
    edge_count: edgeCount,
    acyclic,
    cycles,
    self_loops: selfLoops.map((v) => ids[v]),
    dangling,
    waves: acyclic ? topologicalWaves(successors).map((wave) => idsOf(wave, ids)) : [],
    suggested_breaks: suggestedBreaks,
  };
}

function idsOf(indices: ArrayLike<number>, ids: string[]): string[] {
  const named = new Array<string>(indices.length);
  for (let i = 0; i < indices.length; i++) named[i] = ids[indices[i]];
  return named;
}

/** Plain UTF-16 code unit order, the same as `<` on strings (not locale-aware). */
function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareEdges(a: GraphEdge, b: GraphEdge): number {
  return compareIds(a.from, b.from) || compareIds(a.to, b.to);
}

/**
 * Numbers the nodes and translates edges to those numbers; an edge naming a node outside the given
 * `nodes` is dangling. Nodes are first numbered as met (one hash lookup per endpoint) and then
 * renumbered by rank in sorted order.
 */
function indexGraph({ nodes, edges }: GraphInput) {
  const indexOf = new Map<string, number>();
  for (const id of nodes ?? []) if (!indexOf.has(id)) indexOf.set(id, indexOf.size);
  const indexOrAdd = (id: string): number | undefined => {
    const index = indexOf.get(id);
    if (index !== undefined || nodes !== undefined) return index;
    indexOf.set(id, indexOf.size);
    return indexOf.size - 1;
  };

  const froms = new Int32Array(edges.length);
  const tos = new Int32Array(edges.length);
  const danglingByKey = new Map<string, GraphEdge>();
  let count = 0;
  for (const { from, to } of edges) {
    const fromIndex = indexOrAdd(from);
    const toIndex = indexOrAdd(to);
    if (fromIndex === undefined || toIndex === undefined) {
      danglingByKey.set(JSON.stringify([from, to]), { from, to });
      continue;
    }
    froms[count] = fromIndex;
    tos[count] = toIndex;
    count++;
  }

  // Array#sort without a comparator orders strings by UTF-16 code units, i.e. compareIds, and is faster.
  const ids = [...indexOf.keys()].sort();
  const rankOf = new Int32Array(ids.length);
  ids.forEach((id, rank) => (rankOf[indexOf.get(id)!] = rank));
  for (let i = 0; i < count; i++) {
    froms[i] = rankOf[froms[i]];
    tos[i] = rankOf[tos[i]];
  }
  const dangling = [...danglingByKey.values()].sort(compareEdges);
  return { ids, froms: froms.subarray(0, count), tos: tos.subarray(0, count), dangling };
}

/**
 * Deduplicates edges and lays them out sorted by (from, to), so every successor list is ascending.
 * Self loops are kept aside: they are cycles of their own and would only get in the way of the
 * component and wave computations.
 */
function buildAdjacency(nodeCount: number, froms: Int32Array, tos: Int32Array) {
  // from * nodeCount + to stays below 2^53 for any graph that fits in memory, so a float sort orders edges.
  const keys = new Float64Array(froms.length);
  for (let i = 0; i < froms.length; i++) keys[i] = froms[i] * nodeCount + tos[i];
  keys.sort();

  const offsets = new Int32Array(nodeCount + 1);
  const targets = new Int32Array(keys.length);
  const selfLoops: number[] = [];
  let edgeCount = 0;
  let targetCount = 0;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (i > 0 && key === keys[i - 1]) continue;
    edgeCount++;
    const to = key % nodeCount;
    const from = (key - to) / nodeCount;
    if (from === to) {
      selfLoops.push(from);
      continue;
    }
    offsets[from + 1]++;
    targets[targetCount++] = to;
  }
  for (let v = 0; v < nodeCount; v++) offsets[v + 1] += offsets[v];
  const successors: Adjacency = { offsets, targets: targets.subarray(0, targetCount) };
  return { successors, selfLoops, edgeCount };
}

interface Components {
  /** Component number of every node. */
  componentOf: Int32Array;
  /** Members of each component with two or more nodes, ascending. */
  multiNode: Int32Array[];
}

/** Tarjan's algorithm with an explicit call stack instead of recursion. */
function stronglyConnectedComponents({ offsets, targets }: Adjacency): Components {
  const nodeCount = offsets.length - 1;
  const order = new Int32Array(nodeCount).fill(-1);
  const lowLink = new Int32Array(nodeCount);
  const onStack = new Uint8Array(nodeCount);
  const componentOf = new Int32Array(nodeCount).fill(-1);
  const sccStack = new Int32Array(nodeCount);
  const callNode = new Int32Array(nodeCount);
  const callEdge = new Int32Array(nodeCount);
  const multiNode: Int32Array[] = [];
  let sccTop = 0;
  let callTop = 0;
  let visited = 0;
  let componentCount = 0;

  const enter = (v: number) => {
    order[v] = lowLink[v] = visited++;
    sccStack[sccTop++] = v;
    onStack[v] = 1;
    callNode[callTop] = v;
    callEdge[callTop] = offsets[v];
    callTop++;
  };

  for (let root = 0; root < nodeCount; root++) {
    if (order[root] !== -1) continue;
    enter(root);
    while (callTop > 0) {
      const v = callNode[callTop - 1];
      const edge = callEdge[callTop - 1];
      if (edge < offsets[v + 1]) {
        callEdge[callTop - 1] = edge + 1;
        const w = targets[edge];
        if (order[w] === -1) enter(w);
        else if (onStack[w] && order[w] < lowLink[v]) lowLink[v] = order[w];
        continue;
      }
      callTop--;
      if (callTop > 0) {
        const parent = callNode[callTop - 1];
        if (lowLink[v] < lowLink[parent]) lowLink[parent] = lowLink[v];
      }
      if (lowLink[v] !== order[v]) continue;
      const start = sccStack.lastIndexOf(v, sccTop - 1);
      for (let i = start; i < sccTop; i++) {
        onStack[sccStack[i]] = 0;
        componentOf[sccStack[i]] = componentCount;
      }
      if (sccTop - start > 1) multiNode.push(sccStack.slice(start, sccTop).sort());
      sccTop = start;
      componentCount++;
    }
  }
  return { componentOf, multiNode };
}

/**
 * For each multi-node component: the shortest cycle through its smallest member, found by a
 * breadth-first search that stays inside the component and visits successors in ascending order,
 * so the witness is deterministic. Each component's search touches only its own nodes and edges.
 */
function witnessCycles({ offsets, targets }: Adjacency, { componentOf, multiNode }: Components) {
  const nodeCount = offsets.length - 1;
  const seenIn = new Int32Array(nodeCount).fill(-1);
  const parent = new Int32Array(nodeCount);
  const queue = new Int32Array(nodeCount);
  const cycles = multiNode.map((members) => {
    const start = members[0];
    const component = componentOf[start];
    let head = 0;
    let tail = 0;
    queue[tail++] = start;
    seenIn[start] = component;
    while (head < tail) {
      const u = queue[head++];
      for (let e = offsets[u]; e < offsets[u + 1]; e++) {
        const w = targets[e];
        if (w === start) return { members, path: pathBack(parent, start, u) };
        if (componentOf[w] !== component || seenIn[w] === component) continue;
        seenIn[w] = component;
        parent[w] = u;
        queue[tail++] = w;
      }
    }
    throw new Error(`internal: component of node ${start} has no cycle back to it`);
  });
  return cycles.sort((a, b) => a.path[0] - b.path[0]);
}

/** start → … → last → start, following BFS parents from `last` back to `start`. */
function pathBack(parent: Int32Array, start: number, last: number): number[] {
  const reversed = [start, last];
  for (let v = last; v !== start; v = parent[v]) reversed.push(parent[v]);
  return reversed.reverse();
}

/**
 * Kahn's algorithm in layers. Edges point from dependent to dependency, so a node's remaining
 * dependency count is its remaining out-degree and finishing a node releases its predecessors.
 */
function topologicalWaves({ offsets, targets }: Adjacency): Int32Array[] {
  const nodeCount = offsets.length - 1;
  const predecessors = reverse({ offsets, targets });
  const remaining = new Int32Array(nodeCount);
  const layered = new Int32Array(nodeCount);
  let waveStart = 0;
  let waveEnd = 0;
  for (let v = 0; v < nodeCount; v++) {
    remaining[v] = offsets[v + 1] - offsets[v];
    if (remaining[v] === 0) layered[waveEnd++] = v;
  }
  const waves: Int32Array[] = [];
  while (waveStart < waveEnd) {
    const wave = layered.subarray(waveStart, waveEnd).sort();
    waves.push(wave);
    for (const v of wave) {
      for (let e = predecessors.offsets[v]; e < predecessors.offsets[v + 1]; e++) {
        const dependent = predecessors.targets[e];
        if (--remaining[dependent] === 0) layered[waveEnd++] = dependent;
      }
    }
    waveStart += wave.length;
  }
  return waves;
}

function reverse({ offsets, targets }: Adjacency): Adjacency {
  const nodeCount = offsets.length - 1;
  const reversedOffsets = new Int32Array(nodeCount + 1);
  for (const w of targets) reversedOffsets[w + 1]++;
  for (let v = 0; v < nodeCount; v++) reversedOffsets[v + 1] += reversedOffsets[v];
  const fill = reversedOffsets.slice(0, nodeCount);
  const reversedTargets = new Int32Array(targets.length);
  for (let v = 0; v < nodeCount; v++) {
    for (let e = offsets[v]; e < offsets[v + 1]; e++) reversedTargets[fill[targets[e]]++] = v;
  }
  return { offsets: reversedOffsets, targets: reversedTargets };
}
