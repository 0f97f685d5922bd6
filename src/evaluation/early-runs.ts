import { plantedEnvironment } from './planted-environment.js';
import { coversPath } from '../scope/product-code.js';
import {
  executeTrustedRuns,
  prepareTrustedRuns,
  type PreparedRuns,
  type TrustedRuns,
  type TrustedRunsRequest,
} from './trusted-runs.js';
import { STEP, Steps, timed } from './steps.js';

/** The trusted runs of one tree: the worktree's fingerprint when their snapshots were made. */
export interface TreeRunsRequest extends TrustedRunsRequest {
  tree: string;
}

export interface WaitOptions {
  /** Stops the wait, not the runs: another caller (or a retry) may still use them. */
  signal?: AbortSignal;
  /** Called every PROGRESS_INTERVAL_MS while the caller waits, with the tests all runs finished. */
  onProgress?: (elapsedMs: number, testsSeen: number) => void;
  /** The caller's steps: the runs it starts are counted run by run, those it reuses by the wait. */
  steps?: Steps;
  /**
   * The steps of the trusted runs the caller rests on, wherever they started (beside the candidate
   * run, or by an earlier call): where a turn's time went, not where this call waited.
   */
  runSteps?: Steps;
}

interface Entry {
  request: TreeRunsRequest;
  controller: AbortController;
  prepared: Promise<PreparedRuns>;
  runs: Promise<TrustedRuns>;
  /** Tests finished so far, by run. */
  seen: Map<string, number>;
  steps: Steps;
}

/** As the test runs report: hosts reset their tool timeout on progress, and may allow 5 s of silence. */
const PROGRESS_INTERVAL_MS = 2_500;
/** Finished runs kept for reuse, oldest dropped first: one per task is what a Coach turn needs. */
const KEPT = 32;
/** How long shutdown waits for stopped runs to remove their snapshots. */
const STOP_GRACE_MS = 5_000;

/** One entry per worktree and task: the latest tree's trusted runs, running or done. */
const entries = new Map<string, Entry>();
/** Every entry still running, including one replaced for the same tree that others still await. */
const running = new Set<Entry>();

/**
 * Starts the trusted runs of `request.tree` in the background, replacing (and stopping) the task's runs
 * of any other tree: a candidate run of the tree calls this before it starts, so the snapshots hold the
 * tree it tests and the runs go beside it (the run queue bounds them by the cores), and an approval
 * finds them done or running. `ready` settles once the snapshots are made (never rejects: a failure
 * reaches whoever awaits the runs); `stop` abandons them when the candidate run did not pass on the
 * tree, as no approval of it needs them ahead of time.
 */
export function startTreeRuns(request: TreeRunsRequest): { ready: Promise<void>; stop(): void } {
  const entry = start(request);
  return {
    ready: entry.prepared.then(
      () => undefined,
      () => undefined,
    ),
    stop: () => {
      if (entries.get(keyOf(request)) === entry) entries.delete(keyOf(request));
      entry.controller.abort(new Error('the candidate run did not pass on this tree'));
    },
  };
}

/**
 * The trusted runs of `request.tree`: the ones already started for it when they serve this request
 * (same tree, base and acknowledged left-out files, no environment planted since), else new ones.
 * A failure of the runs is the caller's error; runs stopped because a newer tree replaced them are
 * looked up again.
 */
export async function treeRuns(
  request: TreeRunsRequest,
  wait: WaitOptions = {},
): Promise<TrustedRuns> {
  for (;;) {
    const existing = entries.get(keyOf(request));
    const reused =
      existing !== undefined &&
      (await timed(wait.steps, STEP.earlyRuns, () => serves(existing, request), existing.steps));
    const entry = reused ? existing : start(request);
    try {
      const runs = reused
        ? await timed(wait.steps, STEP.earlyRuns, () => waitFor(entry, wait), entry.steps)
        : await timed(wait.steps, STEP.trustedRuns, () => waitFor(entry, wait), entry.steps);
      if (!reused) wait.steps?.addAll(entry.steps);
      wait.runSteps?.addAll(entry.steps);
      return runs;
    } catch (error) {
      if (wait.signal?.aborted || !entry.controller.signal.aborted) throw error;
    }
  }
}

/** Shutdown: stops every background run and waits (briefly) for their snapshots to be removed. */
export async function stopTreeRuns(): Promise<void> {
  const all = [...running];
  entries.clear();
  for (const entry of all) entry.controller.abort(new Error('the server is stopping'));
  await Promise.race([
    Promise.allSettled(all.map((entry) => entry.runs)),
    new Promise((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref()),
  ]);
}

function keyOf(request: TreeRunsRequest): string {
  return `${request.worktree}\0${request.taskId}`;
}

function start(request: TreeRunsRequest): Entry {
  const key = keyOf(request);
  const previous = entries.get(key);
  // Another tree's runs judge nothing any more. Runs of the same tree made for other acknowledgements
  // keep running for whoever awaits them: stopping them could make two such callers stop each other.
  if (previous && previous.request.tree !== request.tree)
    previous.controller.abort(new Error('a newer tree replaced it'));
  const controller = new AbortController();
  const seen = new Map<string, number>();
  const steps = new Steps();
  const prepared = prepareTrustedRuns(request, steps);
  const runs = prepared.then(async (made) => {
    if (controller.signal.aborted) {
      await made.remove();
      throw controller.signal.reason;
    }
    return executeTrustedRuns(made, {
      signal: controller.signal,
      onProgress: (run, _elapsed, tests) => seen.set(run, tests),
      steps,
    });
  });
  const entry: Entry = { request, controller, prepared, runs, seen, steps };
  running.add(entry);
  void runs.then(
    () => running.delete(entry),
    () => running.delete(entry),
  );
  // Nobody may be waiting yet: a failure is kept in `runs` for them, and said on stderr meanwhile.
  runs.catch((error: unknown) => {
    if (controller.signal.aborted) return;
    if (entries.get(key) === entry) entries.delete(key);
    process.stderr.write(
      `coachgate: the trusted runs of ${request.taskId} failed: ${error instanceof Error ? error.message : String(error)}\n`,
    );
  });
  entries.delete(key);
  entries.set(key, entry);
  for (const old of [...entries.keys()].slice(0, Math.max(0, entries.size - KEPT)))
    entries.delete(old);
  return entry;
}

/** Whether runs started for `entry.request` answer `request` as new runs would. */
async function serves(entry: Entry, request: TreeRunsRequest): Promise<boolean> {
  const made = entry.request;
  if (entry.controller.signal.aborted) return false;
  if (made.tree !== request.tree || made.baseCommit !== request.baseCommit) return false;
  const prepared = await entry.prepared.catch(() => undefined);
  // A failed preparation is reported to whoever waits for the runs; a retry would fail alike.
  if (!prepared) return true;
  // Planted after the snapshots were made (a .bin shim the fingerprint does not cover): judge anew.
  if (prepared.planted.length === 0) {
    const now =
      request.planted ?? plantedEnvironment(request.worktree, request.taskId, request.baseCommit);
    if ((await now).length > 0) return false;
  }
  const covered = (acknowledged: string[] = [], file: string) =>
    acknowledged.some((entry) => coversPath(entry, file));
  return [
    ...prepared.selection.left_out,
    ...prepared.selection.acknowledged.map((file) => ({ file })),
  ].every(
    (item) =>
      covered(made.acknowledgedPaths, item.file) === covered(request.acknowledgedPaths, item.file),
  );
}

async function waitFor(entry: Entry, wait: WaitOptions): Promise<TrustedRuns> {
  const started = Date.now();
  const timer =
    wait.onProgress &&
    setInterval(() => {
      const tests = [...entry.seen.values()].reduce((sum, count) => sum + count, 0);
      wait.onProgress!(Date.now() - started, tests);
    }, PROGRESS_INTERVAL_MS);
  try {
    if (!wait.signal) return await entry.runs;
    const signal = wait.signal;
    signal.throwIfAborted();
    return await new Promise<TrustedRuns>((resolve, reject) => {
      const stop = () => reject(signal.reason);
      signal.addEventListener('abort', stop, { once: true });
      entry.runs.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
    });
  } finally {
    if (timer) clearInterval(timer);
  }
}
