import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Quiet time after a burst before collecting; short enough to follow a storm, long enough to be idle. */
const IDLE_MS = 1_000;
/** Input that makes a burst: a few ordinary requests never trigger a collection, a storm always does. */
const BURST_BYTES = 256 * 1024;

let collectGarbage: (() => void) | undefined;

/**
 * After a burst of input (10,000 malformed frames, say), V8 keeps the heap it grew: Node never tells it
 * the process went idle, so RSS stayed near its peak (+44 MB, then +24 MB once start-up stopped loading
 * the TypeScript compiler) although under 1 MB of it was live: the heap after a full collection is the
 * same after 2,000 or 30,000 frames. Once the input has been quiet for a second after a burst, two full
 * collections return the JS heap to its baseline; what stays (+14..20 MB RSS) is outside it, and a
 * second storm adds nothing to it. `--expose-gc` is set at run time, as jest's leak detector does.
 * Returns the listener for the input's 'data' events.
 */
export function collectWhenIdleAfterBursts(): (chunk: Buffer) => void {
  let bytes = 0;
  let timer: NodeJS.Timeout | undefined;
  const collect = () => {
    timer = undefined;
    bytes = 0;
    if (!collectGarbage) {
      setFlagsFromString('--expose-gc');
      collectGarbage = runInNewContext('gc') as () => void;
    }
    collectGarbage();
    collectGarbage();
  };
  return (chunk) => {
    bytes += chunk.length;
    if (bytes < BURST_BYTES) return;
    if (timer) timer.refresh();
    else timer = setTimeout(collect, IDLE_MS).unref();
  };
}
