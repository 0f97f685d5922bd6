import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { RunRecordSchema, type RunRecord } from '../core/run-record.js';
import { readJsonFile, writeJsonAtomically, type JsonFile } from './files.js';
import { artifactNames, taskDirectory } from './paths.js';

/** Time-sortable and unique: `20261121T160512345Z-3fa9`. */
export function newRunId(now = new Date()): string {
  return `${now.toISOString().replace(/[-:.]/g, '')}-${randomBytes(2).toString('hex')}`;
}

export function runsDirectory(worktree: string, taskId: string): string {
  return path.join(taskDirectory(worktree, taskId), artifactNames.runsDirectory);
}

export async function saveRun(worktree: string, taskId: string, run: RunRecord): Promise<string> {
  const file = path.join(runsDirectory(worktree, taskId), `${run.run_id}.json`);
  await writeJsonAtomically(file, run);
  return file;
}

/** The most recent stored run for a task, validated; corrupt records are reported, not skipped. */
export async function latestRun(worktree: string, taskId: string): Promise<JsonFile<RunRecord>> {
  const directory = runsDirectory(worktree, taskId);
  const names = (await readdir(directory).catch(() => [] as string[])).filter((name) => name.endsWith('.json')).sort();
  const latest = names.at(-1);
  if (!latest) return { state: 'missing', path: directory };
  const file = await readJsonFile(path.join(directory, latest));
  if (file.state !== 'ok') return file;
  const parsed = RunRecordSchema.safeParse(file.value);
  return parsed.success ? { state: 'ok', path: file.path, value: parsed.data } : { state: 'corrupt', path: file.path, problem: `not a run record: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}` };
}
