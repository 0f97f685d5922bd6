import type { StallTurn } from './stall.js';
import type { VerdictLogEntry } from './verdict-entry.js';

export interface TaskState {
  status: VerdictLogEntry['status'];
  strikes: number;
  last_turn: number;
  block_reason: string | null;
}

/** The task's state as the verdict log leaves it; refused approvals change nothing. */
export function taskState(entries: VerdictLogEntry[]): TaskState {
  const verdicts = entries.filter((entry) => entry.kind === 'verdict');
  const last = verdicts.at(-1);
  return {
    status: last?.status ?? 'in_progress',
    strikes: last?.strikes ?? 0,
    last_turn: Math.max(0, ...verdicts.map((entry) => entry.turn)),
    block_reason: last?.status === 'blocked' ? (last.reasons?.join('; ') ?? 'blocked') : null,
  };
}

/** What stall detection compares: one turn per feedback verdict, in order. */
export function stallHistory(entries: VerdictLogEntry[]): StallTurn[] {
  return entries.flatMap((entry) =>
    entry.kind === 'verdict' && entry.decision === 'feedback' && entry.stall_input
      ? [{ ...entry.stall_input, turn: entry.turn }]
      : [],
  );
}

/**
 * A broken chain approves nothing: its entries, an approval among them, are unproven, and no further
 * verdict is recorded until a person restores the log. So the task is shown blocked, saying why.
 */
export function chainState(state: TaskState, intact: boolean): TaskState {
  if (intact) return state;
  return {
    ...state,
    status: 'blocked',
    block_reason: `the verdict log does not verify (verdict_chain lists why): a person restores the task's records in the state directory${state.status === 'approved' ? '; its approval does not count' : ''}`,
  };
}
