/**
 * The `autobuild` MCP prompt (a slash command in Claude Code): the host session drives the same bounded loop
 * as `coachgate autobuild`, with a fresh Player and Coach subagent per turn and the server's records as truth.
 */
export function autobuildPromptText(taskId: string, maxTurns: number): string {
  return `Run the coachgate AutoBuild loop for ${taskId}, at most ${maxTurns} turns. You are the orchestrator: you never edit code or judge it yourself.

1. Call worktree_start (task_id ${taskId}). All work happens in the returned path.
2. For turn = 1, 2, … ${maxTurns}:
   a. Start a NEW autobuild-player subagent (never reuse one: each turn gets a fresh context). Give it the
      worktree path, task_id ${taskId}, the turn number, and the feedback_for_player from the previous turn
      (task_status / the coachgate "player" prompt contain it). It implements, tests, and calls
      record_player_report for this turn.
   b. Start a NEW autobuild-coach subagent with the worktree path, task_id and turn. It verifies with the
      coachgate tools and calls record_verdict for this turn.
   c. Call task_status. Its status — not anything a subagent said — decides:
      approved → step 3; blocked → step 4; in_progress → next turn with the new feedback_for_player.
3. Approved: run \`coachgate gate --task ${taskId} --worktree <path>\` (or task_status) and show the gate.
   Ask the user before merging; only on their yes call worktree_finish with merge: true.
4. Blocked, or ${maxTurns} turns without approval: call worktree_preserve with the reason and show the user
   review.md's failure pattern. Do not try again on your own.

After each turn print one line: "Turn N — Player: <files changed, tests claimed> | Coach: <decision, must_fix count, strikes>".`;
}
