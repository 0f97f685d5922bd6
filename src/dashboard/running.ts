/**
 * A run of a task the server has started and not yet stored: the runner writes the run's log into the
 * mirror's runs/ from its first byte, and the signed record only when the run ends. The page shows it
 * so that a long run is not mistaken for an idle loop; it is no evidence (nothing of it is signed).
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { MAX_TIMEOUT_S } from '../actions/run-independent-tests.js';
import { runsDirectory, storedRunIds } from '../records/runs.js';

export interface RunInProgress {
  run_id: string;
  started_at: string;
  /** Output written so far, and when last: a silent run and a run whose server died look alike. */
  output_bytes: number;
  last_output_at: string;
}

/** A stored run's id (newRunId): a trusted run's log adds `-baseline`, `-trusted` and so on. */
const RUN_LOG = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z-[0-9a-f]{4}\.log$/;

/** A run and its comparison with the base can last no longer than two of the longest timeouts. */
const LONGEST_RUN_MS = 2 * MAX_TIMEOUT_S * 1000;

/**
 * The latest run whose log exists and whose record does not (in the run order or the mirror), started
 * after the last stored run (runs of one worktree take turns) and within the longest a run can last;
 * null when there is none.
 */
export async function runInProgress(
  worktree: string,
  taskId: string,
  now = Date.now(),
): Promise<RunInProgress | null> {
  const directory = runsDirectory(worktree, taskId);
  const [names, stored] = await Promise.all([
    readdir(directory).catch(() => [] as string[]),
    storedRunIds(worktree, taskId),
  ]);
  const last = stored.at(-1) ?? '';
  const candidates = names
    .flatMap((name) => {
      const match = RUN_LOG.exec(name);
      if (!match) return [];
      const [, year, month, day, hour, minute, second, ms] = match;
      const started = `${year}-${month}-${day}T${hour}:${minute}:${second}.${ms}Z`;
      const runId = name.slice(0, -'.log'.length);
      const fresh = now - Date.parse(started) < LONGEST_RUN_MS;
      // Its record beside it: stored, here or under another state directory.
      const recorded = stored.includes(runId) || names.includes(`${runId}.json`);
      return runId > last && !recorded && fresh ? [{ run_id: runId, started_at: started }] : [];
    })
    .sort((a, b) => a.run_id.localeCompare(b.run_id));
  const latest = candidates.at(-1);
  if (!latest) return null;
  const info = await stat(path.join(directory, `${latest.run_id}.log`)).catch(() => undefined);
  if (!info?.isFile()) return null;
  return {
    ...latest,
    output_bytes: info.size,
    last_output_at: info.mtime.toISOString(),
  };
}
