/**
 * Each coach_turn_<N>.json names the verdict log's head its verdict was appended to
 * (`verdict_log_head`, the SHA-256 of the line before it), and record_verdict writes it under the task
 * lock just before appending that verdict. So the log must hold a verdict of turn N whose prev_sha256
 * is that head; one it does not hold was cut from the log, or the log was replaced by an older copy.
 */
import type { VerdictLogEntry } from '../verdicts/verdict-entry.js';
import { readStateCopy, stateRecordNames, taskRecordFile, type MirroredFile } from './mirrored.js';
import { artifactNames, turnNumbers } from './mirror-paths.js';

export interface CoachTurnHead {
  turn: number;
  head: string;
  /** How messages name the record. */
  file: string;
}

/** The heads the task's coach turn records name (records without one, or unreadable, are skipped). */
export async function coachTurnHeads(
  recordNames: string[],
  recordFile: (name: string) => Promise<MirroredFile>,
  read: (file: MirroredFile) => Promise<string | undefined>,
  display: (file: MirroredFile) => string,
): Promise<CoachTurnHead[]> {
  const heads: CoachTurnHead[] = [];
  for (const turn of turnNumbers(recordNames, 'coach_turn_')) {
    const file = await recordFile(artifactNames.coachTurn(turn));
    const head = headOf(await read(file));
    if (head) heads.push({ turn, head, file: display(file) });
  }
  return heads;
}

/** The heads named by the server's own copies of the task's coach turn records. */
export async function stateCoachTurnHeads(
  worktree: string,
  taskId: string,
): Promise<CoachTurnHead[]> {
  return coachTurnHeads(
    await stateRecordNames(worktree, taskId),
    (name) => taskRecordFile(worktree, taskId, name),
    readStateCopy,
    (file) => file.state,
  );
}

function headOf(text: string | undefined): string | undefined {
  try {
    const head = (JSON.parse(text ?? '') as { verdict_log_head?: unknown }).verdict_log_head;
    return typeof head === 'string' ? head : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Coach turn records whose verdict the log does not hold. `recording`: the turn a verdict is being
 * recorded for now, whose record a server stopped between the two writes may have left behind.
 */
export function verdictsCut(
  entries: VerdictLogEntry[],
  heads: CoachTurnHead[],
  recording?: number,
): string[] {
  return heads
    .filter((item) => item.turn !== recording)
    .filter(
      (item) =>
        !entries.some(
          (entry) =>
            entry.kind === 'verdict' && entry.turn === item.turn && entry.prev_sha256 === item.head,
        ),
    )
    .map(
      (item) =>
        `${item.file} was written for a turn ${item.turn} verdict after the verdicts.jsonl line with SHA-256 ${item.head.slice(0, 12)}…, and the log holds no such verdict: lines were cut from it, or an older copy of it was restored`,
    );
}
