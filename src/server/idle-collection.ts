import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Quiet time after a burst before collecting; short enough to follow a storm, long enough to be idle. */
const IDLE_MS = 1_000;
/**
 * V8 shrinks its young generation only in a collection that finds the allocation rate low over its
 * last 5 s: on Node 20 the collection right after a burst never does, one 6 s later does.
 */
const SHRINK_AFTER_MS = 6_000;
/** Input that makes a burst: a few ordinary requests never trigger a collection, a storm always does. */
const BURST_BYTES = 256 * 1024;
/**
 * V8 12 (Node 22) added the "last-resort" collection: compacting, young generation shrunk, caches
 * cleared. V8 11 (Node 20) does no collection at all when `gc()` is given options.
 */
const HAS_LAST_RESORT = Number(process.versions.v8.split('.')[0]) >= 12;

type CollectGarbage = (options?: { type: 'major'; execution: 'sync'; flavor: string }) => void;
let collectGarbage: CollectGarbage | undefined;

/**
 * After a burst of input (10,000 malformed frames, say), V8 keeps the heap it grew: Node never tells it
 * the process went idle, so RSS stayed near its peak (+44 MB) although under 1 MB of it was live (heap
 * snapshots before and after a storm differ by the JIT's code). Once the input has been quiet for a
 * second after a burst, a full collection returns the old generation's pages; a second one, once V8
 * sees the allocation rate has dropped, returns the young generation it grew to 32 MB. `--expose-gc`
 * is set at run time, as jest's leak detector does. Returns the listener for the input's 'data' events.
 */
export function collectWhenIdleAfterBursts(): (chunk: Buffer) => void {
  let bytes = 0;
  let timer: NodeJS.Timeout | undefined;
  const collect = (then?: () => void) => () => {
    timer = then && setTimeout(then, SHRINK_AFTER_MS).unref();
    collectAllGarbage();
  };
  const afterBurst = collect(collect());
  return (chunk) => {
    bytes += chunk.length;
    if (bytes < BURST_BYTES) return;
    bytes = 0;
    if (timer) timer.refresh();
    else timer = setTimeout(afterBurst, IDLE_MS).unref();
  };
}

function collectAllGarbage(): void {
  if (!collectGarbage) {
    setFlagsFromString('--expose-gc');
    collectGarbage = runInNewContext('gc') as CollectGarbage;
  }
  if (HAS_LAST_RESORT) {
    collectGarbage({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    return;
  }
  // Node 20: compaction moves the survivors together, so the emptied pages go back to the system.
  setFlagsFromString('--compact-on-every-full-gc');
  try {
    collectGarbage();
  } finally {
    setFlagsFromString('--no-compact-on-every-full-gc');
  }
}
