import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { AgentRole } from '../actions/agent-prompt.js';
import { projectEnvironment } from '../runner/environment.js';
import { stateRoot } from '../records/state-directory.js';
import type { ProcessOutcome } from '../runner/execute.js';
import { runSandboxed, type Isolation } from '../sandbox/run.js';
import { OutputCapture } from '../runner/output-capture.js';

export interface AgentTurn {
  role: AgentRole;
  /** The user's agent command line, run by `sh -c` in the task worktree. */
  command: string;
  worktree: string;
  taskId: string;
  turn: number;
  prompt: string;
  /** Where the prompt and the agent's output are kept: the driver's directory for this task. */
  directory: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** How the command runs (the Player's sandbox); absent: unconfined, as the user's own command. */
  isolation?: Isolation;
  /** A line that leads the log: the sandbox in force for this turn. */
  notice?: string;
}

/**
 * One fresh agent process for one turn: the prompt goes to a file named by $COACHGATE_PROMPT_FILE (agent
 * CLIs take it as an argument: `claude -p "$(cat "$COACHGATE_PROMPT_FILE")"`); its output goes to a log.
 * Same process-tree discipline as test runs, so a killed turn leaves no agent behind.
 */
export async function runAgentTurn(
  turn: AgentTurn,
): Promise<ProcessOutcome & { log_path: string }> {
  await mkdir(turn.directory, { recursive: true });
  const promptFile = path.join(turn.directory, `${turn.role}_turn_${turn.turn}.prompt.md`);
  const logPath = path.join(turn.directory, `${turn.role}_turn_${turn.turn}.log`);
  await writeFile(promptFile, turn.prompt);
  const environment = await projectEnvironment(turn.worktree);
  const env = {
    ...environment.env,
    COACHGATE_ROLE: turn.role,
    COACHGATE_TASK_ID: turn.taskId,
    COACHGATE_TURN: String(turn.turn),
    COACHGATE_WORKTREE: turn.worktree,
    COACHGATE_PROMPT_FILE: promptFile,
    COACHGATE_STATE_DIR: stateRoot(),
  };
  const capture = await OutputCapture.open(logPath);
  if (turn.notice) capture.write(`[coachgate] ${turn.notice}\n`);
  try {
    const outcome = await runSandboxed(
      {
        argv: ['sh', '-c', turn.command],
        cwd: turn.worktree,
        env,
        timeoutMs: turn.timeoutMs,
        signal: turn.signal,
        // The Coach and the validators are the user's own commands, started as the user; the
        // Player's turn comes with its sandbox (docs/sandbox.md, "The Player agent").
        isolation: turn.isolation ?? {
          unsandboxed: "the Coach's and validators' commands are the user's own",
        },
      },
      capture,
    );
    return { ...outcome, log_path: logPath };
  } finally {
    await capture.close();
  }
}
