import type { WaitOptions } from '../evaluation/early-runs.js';
import { Steps } from '../evaluation/steps.js';
import type { ToolContext } from './tool.js';
import { counted } from '../errors/quote.js';

/** As the test runs report: hosts may allow 5 s of silence. */
const PROGRESS_INTERVAL_MS = 2_500;

/**
 * Runs `work`, which may wait for the trusted runs, with progress every PROGRESS_INTERVAL_MS for the
 * whole call, so a client that resets its request timeout on progress (the SDK's
 * resetTimeoutOnProgress) waits as long as the runs last. Each message names the steps in progress
 * (counted in the `steps` handed to `work`), so a slow call says where it waits.
 */
export async function whileTrustedRunsWait<T>(
  context: Pick<ToolContext, 'signal' | 'progress'>,
  work: (wait: WaitOptions & { steps: Steps }) => Promise<T>,
): Promise<T> {
  let ticks = 0;
  let testsSeen = 0;
  const steps = new Steps();
  const started = Date.now();
  const heartbeat = setInterval(
    () =>
      void context.progress(
        ++ticks,
        `${steps.inProgress().join('; ') || 'trusted evaluation'}: ${Math.round((Date.now() - started) / 1000)} s into the call, ${counted(testsSeen, 'test')} finished in the trusted runs`,
      ),
    PROGRESS_INTERVAL_MS,
  );
  return work({
    signal: context.signal,
    onProgress: (_elapsedMs, tests) => void (testsSeen = tests),
    steps,
  }).finally(() => clearInterval(heartbeat));
}
