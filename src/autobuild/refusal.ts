import { recordVerdict } from '../actions/record-verdict.js';
import type { TaskScope } from '../actions/task-scope.js';
import { readVerdictLog } from '../records/verdict-log.js';

/**
 * The reasons the server gave for refusing approvals of one turn, from its verdict log (refused attempts
 * are logged there, never recorded as verdicts). Repeated reasons are listed once.
 */
export async function refusalReasons(scope: TaskScope, turn: number): Promise<string[]> {
  const log = await readVerdictLog(scope.worktree, scope.taskId);
  const reasons = log.entries
    .filter((entry) => entry.kind === 'refused_approval' && entry.turn === turn)
    .flatMap((entry) => entry.reasons ?? []);
  return [...new Set(reasons)];
}

/**
 * A Coach turn that ended on a refused approval, with no verdict, is recorded as feedback whose must_fix
 * issues are the server's reasons. Otherwise a Coach that keeps approving broken work would cost no strike,
 * never stall and leave the Player without the reasons; this way the next Player prompt carries them and
 * strikes and stall detection count the turn like any other rejected one.
 */
export async function recordRefusalAsFeedback(
  scope: TaskScope,
  turn: number,
  reasons: string[],
): Promise<void> {
  await recordVerdict(scope, {
    turn,
    decision: 'feedback',
    rationale: `The Coach approved turn ${turn}, but the server refused the approval on its own evidence; coachgate autobuild records the refusal as feedback.`,
    issues: reasons.map((reason) => ({
      severity: 'must_fix',
      category: 'approval_refused',
      description: reason,
    })),
  });
}
