import path from 'node:path';
import type { TaskScope } from '../actions/task-scope.js';
import { git } from '../repo/git.js';
import { CallerError } from '../errors/errors.js';
import { detectSandbox, INSTALL_ADVICE } from '../sandbox/backend.js';
import { effectivePolicy } from '../sandbox/policy.js';
import { SandboxUnavailableError, type Isolation } from '../sandbox/run.js';
import { storeDirectory } from '../records/mirror-paths.js';
import type { PlayerEndpoint } from './player-endpoint.js';

/** How the driver runs the Player's command, and the line that says so (in the output and its log). */
export interface PlayerIsolation {
  isolation: Isolation;
  /** Shown at the start of the run and at the top of every Player log. */
  notice: string;
}

/**
 * `--sandbox-player` (the default): the Player's command runs in the sandbox the base config's policy
 * gives the server's own runs, with the user's home (its own login and configuration) but not the
 * state directory, the key, the tokens or the user's credential stores, in its own PID namespace. Its
 * network is the host's: an agent talks to its model API, and bubblewrap cannot filter by domain.
 * It reaches coachgate through the driver's endpoint, whose URL and token it is given.
 */
export async function playerIsolation(
  scope: TaskScope,
  sandboxPlayer: boolean,
  endpoint: PlayerEndpoint,
  /** The branch the task merges into: the Player commits on its own branch, never on this one. */
  baseBranch: string,
): Promise<PlayerIsolation> {
  const policy = effectivePolicy(scope.config.coachgate.sandbox);
  if (!sandboxPlayer) {
    if (policy.mode === 'required')
      throw new CallerError(
        'Refusing --no-sandbox-player: the base config (or --sandbox) requires a sandbox (coachgate.sandbox.mode: required), and the Player is the code it is there for.',
        'Drop --no-sandbox-player, or change coachgate.sandbox.mode on the base branch.',
      );
    return {
      isolation: { unsandboxed: '--no-sandbox-player', grant: endpointVariables(endpoint) },
      notice:
        'WARNING: the Player runs NOT SANDBOXED (--no-sandbox-player): as you, it can read the signing key, the state directory and the tokens file, rewrite records and signal this driver. Drop --no-sandbox-player to confine it.',
    };
  }
  const backend = policy.mode === 'off' ? undefined : await detectSandbox();
  if (!backend?.command) {
    const why = backend
      ? `no working sandbox (${backend.reason})`
      : 'coachgate.sandbox.mode is off';
    if (policy.mode === 'required')
      throw new SandboxUnavailableError(
        `Refusing to run the Player: the base config (or --sandbox) requires a sandbox, and this machine has ${why}.`,
        INSTALL_ADVICE,
      );
    return {
      isolation: await confined(scope, policy, endpoint, baseBranch),
      notice: `WARNING: the Player runs NOT SANDBOXED: ${why}. As you, it can read the signing key and the state directory and signal this driver. ${INSTALL_ADVICE}`,
    };
  }
  return {
    isolation: await confined(scope, policy, endpoint, baseBranch),
    notice: `Player sandbox: ${backend.name}, network host (its model API), its worktree and your home writable; the state directory, the key, the tokens and your credential stores hidden`,
  };
}

async function confined(
  scope: TaskScope,
  policy: ReturnType<typeof effectivePolicy>,
  endpoint: PlayerEndpoint,
  baseBranch: string,
): Promise<Isolation> {
  const common = (await git(scope.worktree).revparse(['--git-common-dir'])).trim();
  return {
    policy,
    home: 'user',
    network: 'host',
    // The driver's settings, prompts and the records' mirror: a Player that rewrote driver.json
    // would choose the command `resume` runs unconfined as the Coach.
    // The base branch's ref too (when loose; packed-refs is read-only for the Player anyway), so
    // the Player cannot move the branch its work is merged into.
    readOnly: [
      storeDirectory(scope.worktree),
      path.join(path.resolve(scope.worktree, common), 'refs/heads', baseBranch),
    ],
    grant: endpointVariables(endpoint),
  };
}

/** How the Player's agent reaches coachgate: `$COACHGATE_MCP_URL` with `Bearer $COACHGATE_MCP_TOKEN`. */
function endpointVariables(endpoint: PlayerEndpoint): Record<string, string> {
  return { COACHGATE_MCP_URL: endpoint.url, COACHGATE_MCP_TOKEN: endpoint.token };
}
