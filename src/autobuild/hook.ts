import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { gateReport } from '../actions/gate-report.js';
import { openTask } from '../actions/task-scope.js';
import { stopHookDecision, type StopHookInput, type StopHookOutput } from './hook-decision.js';
import { git } from '../repo/git.js';
import { WORKTREES_DIRECTORY } from '../repo/worktrees.js';

/**
 * `coachgate hook`: a Claude Code Stop / SubagentStop hook. Finds the task (explicit id, $COACHGATE_TASK_ID,
 * a .guardkit/worktrees/<TASK> directory or an autobuild/<TASK> branch) and blocks the stop while the gate
 * fails. Outside any task it allows everything.
 */
export async function stopHook(input: StopHookInput, taskId?: string): Promise<StopHookOutput> {
  const cwd = path.resolve(input.cwd ?? process.cwd());
  const root = (
    await git(cwd)
      .raw(['rev-parse', '--show-toplevel'])
      .catch(() => '')
  ).trim();
  if (!root) return null;
  const task = taskId ?? process.env.COACHGATE_TASK_ID ?? (await taskOfWorktree(root));
  if (!task) return null;
  const report = await gateReport(await openTask(root, task));
  return stopHookDecision(
    input.hook_event_name ?? 'Stop',
    await lastAssistantText(input.transcript_path),
    report,
  );
}

async function taskOfWorktree(root: string): Promise<string | undefined> {
  const parent = path.dirname(root);
  if (parent.endsWith(path.join(...WORKTREES_DIRECTORY.split('/')))) return path.basename(root);
  const branch = (
    await git(root)
      .raw(['rev-parse', '--abbrev-ref', 'HEAD'])
      .catch(() => '')
  ).trim();
  return /^autobuild\/(.+)$/.exec(branch)?.[1];
}

/** The agent's final words, from Claude Code's JSONL transcript; empty when there is none to read. */
async function lastAssistantText(transcript: string | undefined): Promise<string> {
  if (!transcript) return '';
  const lines = (await readFile(transcript, 'utf8').catch(() => '')).trim().split('\n').reverse();
  for (const line of lines) {
    try {
      const entry = JSON.parse(line) as {
        type?: string;
        message?: { content?: string | { type: string; text?: string }[] };
      };
      if (entry.type !== 'assistant') continue;
      const content = entry.message?.content;
      return typeof content === 'string'
        ? content
        : (content ?? []).map((part) => part.text ?? '').join('\n');
    } catch {
      continue;
    }
  }
  return '';
}
