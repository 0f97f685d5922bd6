/** A run's Python bytecode cache, as src/runner/bytecode-cache.ts gives it and the sandbox shows it. */
export interface BytecodeCache {
  /** PYTHONPYCACHEPREFIX: where Python reads bytecode (and the filling run writes it). */
  directory: string;
  /** Only for the baseline: the one run of a turn that executes no Player code. */
  writable: boolean;
  /** What the sandbox puts back, each at its own path: the cache, and a run's view of it. */
  revealed: string[];
}
