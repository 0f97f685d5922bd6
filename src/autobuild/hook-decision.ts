import type { GateReport } from '../actions/gate-render.js';

/** What Claude Code sends a Stop / SubagentStop hook on stdin (the fields coachgate uses). */
export interface StopHookInput {
  hook_event_name?: string;
  cwd?: string;
  transcript_path?: string;
  stop_hook_active?: boolean;
}

/** Claude Code's hook output: `decision: "block"` keeps the agent working and feeds it `reason`. */
export type StopHookOutput =
  { decision: 'block'; reason: string } | { systemMessage: string } | null;

const COMPLETION_CLAIM =
  /\b(task (is )?(now )?(complete|completed|done|finished)|(all )?(acceptance )?criteria (are )?(now )?met|ready to merge|approved?d?\b|implementation (is )?complete)/i;

/** Whether an agent's final message claims the task is finished (SubagentStop blocks only those). */
export function claimsCompletion(message: string): boolean {
  return COMPLETION_CLAIM.test(message);
}

/**
 * Stop ends the session's work on the task, so it must pass the gate; a subagent may stop between turns
 * unless it claims the task is done. A blocked task may stop: it needs a human, not another attempt.
 */
export function stopHookDecision(
  event: string,
  lastMessage: string,
  report: GateReport,
): StopHookOutput {
  if (report.passed) return null;
  if (event === 'SubagentStop' && !claimsCompletion(lastMessage)) return null;
  if (report.status === 'blocked')
    return {
      systemMessage: `coachgate: ${report.task_id} is blocked (${report.blocked?.reason ?? 'strikes exhausted'}); escalate to a human.`,
    };
  const reasons = report.reasons.map((reason) => `- ${reason}`).join('\n');
  return {
    decision: 'block',
    reason: `coachgate gate FAILS for ${report.task_id}, so the task is not complete:\n${reasons}\nKeep working: the Coach must record an approval the server accepts (and build, lint and tests must pass) before you stop.`,
  };
}
