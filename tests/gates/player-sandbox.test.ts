import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import { GREET_TASK } from '../helpers/node-project.js';
import { scriptedAgents } from '../helpers/scripted-agents.js';
import { bwrapUsable } from '../helpers/bubblewrap.js';
import { CLI as cli } from '../helpers/cli.js';

const agents = scriptedAgents();

/**
 * A user's machine in a temp directory: a home with an agent's own configuration and an ssh key,
 * coachgate's state directory where it lives by default (in that home), holding the signing key the
 * driver creates and the HTTP coach's tokens file.
 */
interface Machine {
  home: string;
  state: string;
  tokens: string;
  token: string;
  sshSecret: string;
  env: NodeJS.ProcessEnv;
  remove(): void;
}

function machine(): Machine {
  const home = mkdtempSync(path.join(os.tmpdir(), 'coachgate-home-'));
  const state = path.join(home, '.local/state/coachgate');
  mkdirSync(state, { recursive: true, mode: 0o700 });
  const token = randomBytes(24).toString('hex');
  const tokens = path.join(state, 'http-tokens.yaml');
  writeFileSync(tokens, `${token}: coach\n`, { mode: 0o600 });
  const sshSecret = randomBytes(16).toString('hex');
  mkdirSync(path.join(home, '.ssh'), { mode: 0o700 });
  writeFileSync(path.join(home, '.ssh/id_test'), sshSecret, { mode: 0o600 });
  mkdirSync(path.join(home, '.config/agent'), { recursive: true });
  writeFileSync(path.join(home, '.config/agent/settings.json'), '{"model":"x"}\n');
  return {
    home,
    state,
    tokens,
    token,
    sshSecret,
    env: { ...process.env, HOME: home, COACHGATE_STATE_DIR: state },
    remove: () => rmSync(home, { recursive: true, force: true }),
  };
}

/**
 * A hostile Player with a shell: each attempt prints PLAYER-ATTACK <name> SUCCEEDED or blocked; then
 * it does its job (edits and commits in its worktree, reads its own configuration) and hands over to
 * the scripted Player, which records its report through the driver's endpoint.
 */
function hostilePlayer(target: Machine): string {
  const script = path.join(agents.dir, 'hostile.sh');
  writeFileSync(
    script,
    `#!/bin/sh
KEY="$1/keys/ed25519.pem"; TOKENS="$2"; TOKEN="$3"; STATE="$1"; SSH_SECRET="$4"
# The driver writes its pid beside the home once it has started (the test's stand-in for ps).
for i in 1 2 3 4 5 6 7 8 9 10; do [ -s "$HOME/driver.pid" ] && break; sleep 0.5; done
PID=$(cat "$HOME/driver.pid")
attempt() { name=$1; shift; if "$@" >/dev/null 2>&1; then echo "PLAYER-ATTACK $name SUCCEEDED"; else echo "PLAYER-ATTACK $name blocked"; fi; }
attempt read_key grep -q "PRIVATE KEY" "$KEY"
attempt read_tokens grep -q "$TOKEN" "$TOKENS"
# A write that lands in an empty stand-in (no keys/ beside it) is no success.
attempt write_state sh -c 'echo x > "$1/pwned-by-player" && test -d "$1/keys"' _ "$STATE"
attempt signal_driver kill -0 "$PID"
attempt read_driver_environ grep -q COACHGATE "/proc/$PID/environ"
attempt see_driver sh -c 'for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < $f | grep -q "[c]li.js autobuild" && exit 0; done; exit 1'
attempt read_ssh_key grep -q "$SSH_SECRET" "$HOME/.ssh/id_test"
attempt rewrite_driver_settings sh -c ': >> "$COACHGATE_WORKTREE/.guardkit/autobuild/$COACHGATE_TASK_ID/driver/driver.json"'
attempt rewrite_git_config git config --local core.hooksPath /tmp/player-hooks
grep -q model "$HOME/.config/agent/settings.json" && echo "PLAYER-OWN-CONFIG read"
echo "notes" > NOTES.md && git add NOTES.md && git -c user.name=P -c user.email=p@example.com commit -qm "player: notes" && echo "PLAYER-COMMIT done"
# Its MCP host starts coachgate on stdio, which relays to the driver's endpoint.
SCRIPTED_STDIO=1 exec ${agents.player(1)}
`,
  );
  return ['sh', script, target.state, target.tokens, target.token, target.sshSecret]
    .map((word) => JSON.stringify(word))
    .join(' ');
}

/** The driver, started as a user would; its pid is written where the hostile Player looks. */
function autobuild(
  repo: TempRepo,
  target: Machine,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ stdout: string; stderr: string; status: number | null }> {
  const child = spawn(
    process.execPath,
    [cli, 'autobuild', '--task', 'TASK-042', '--worktree', repo.dir, ...args],
    { env: { ...target.env, ...env } },
  );
  writeFileSync(path.join(target.home, 'driver.pid'), String(child.pid));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) =>
    child.on('close', (status) => resolve({ stdout, stderr, status })),
  );
}

function attempts(repo: TempRepo): Record<string, string> {
  const log = readFileSync(
    path.join(
      repo.dir,
      '.guardkit/worktrees/TASK-042/.guardkit/autobuild/TASK-042/driver/player_turn_1.log',
    ),
    'utf8',
  );
  return Object.fromEntries(
    [...log.matchAll(/^PLAYER-ATTACK (\S+) (.+)$/gm)].map((match) => [match[1]!, match[2]!]),
  );
}

function project(config = ''): TempRepo {
  return makeRepo({
    'package.json': JSON.stringify({ type: 'module', scripts: { test: 'node --test' } }),
    '.guardkit/tasks/backlog/TASK-042.md': GREET_TASK,
    ...(config ? { '.guardkit/config.yaml': config } : {}),
  });
}

let repo: TempRepo | undefined;
let target: Machine | undefined;
afterEach(() => {
  repo?.remove();
  target?.remove();
});

const ATTACKS = [
  'read_key',
  'read_tokens',
  'write_state',
  'signal_driver',
  'read_driver_environ',
  'see_driver',
  'read_ssh_key',
  'rewrite_driver_settings',
  'rewrite_git_config',
];

describe.skipIf(!bwrapUsable)('a hostile Player run by autobuild (needs usable bubblewrap)', () => {
  it('inside the sandbox: every attempt fails, while it still edits, commits and reports', async () => {
    repo = project();
    target = machine();
    const result = await autobuild(repo, target, [
      '--player-cmd',
      hostilePlayer(target),
      '--coach-cmd',
      agents.coach(),
      '--max-turns',
      '1',
    ]);
    expect(result.stdout).toMatch(/^Player sandbox: bubblewrap, network host/m);
    expect(result.stdout).toMatch(/Player: 2 file\(s\), tests passing \(its own claim\)/);
    expect(result.stdout).toMatch(/AutoBuild APPROVED after 1 turn\(s\)/);
    expect(result.status).toBe(0);
    const seen = attempts(repo);
    expect(Object.keys(seen).sort()).toEqual([...ATTACKS].sort());
    for (const attack of ATTACKS) expect(`${attack}: ${seen[attack]}`).toBe(`${attack}: blocked`);
    // Nothing reached the real state directory, and the key the driver made is still its own.
    expect(existsSync(path.join(target.state, 'pwned-by-player'))).toBe(false);
    expect(readFileSync(path.join(target.state, 'keys/ed25519.pem'), 'utf8')).toMatch(
      /PRIVATE KEY/,
    );
    expect(readFileSync(path.join(repo.dir, '.git/config'), 'utf8')).not.toMatch(/hooksPath/);
    const log = readFileSync(
      path.join(
        repo.dir,
        '.guardkit/worktrees/TASK-042/.guardkit/autobuild/TASK-042/driver/player_turn_1.log',
      ),
      'utf8',
    );
    expect(log).toMatch(/^\[coachgate\] Player sandbox: bubblewrap/);
    expect(log).toMatch(/PLAYER-OWN-CONFIG read/);
    expect(log).toMatch(/PLAYER-COMMIT done/);
    expect(repo.git('log', '--format=%s', 'autobuild/TASK-042')).toMatch(/player: notes/);
  });

  it('--no-sandbox-player says loudly that the Player is unconfined, and the same attempts then work', async () => {
    repo = project();
    target = machine();
    const result = await autobuild(repo, target, [
      '--player-cmd',
      hostilePlayer(target),
      '--coach-cmd',
      agents.coach(),
      '--max-turns',
      '1',
      '--no-sandbox-player',
    ]);
    expect(result.stdout).toMatch(
      /^WARNING: the Player runs NOT SANDBOXED \(--no-sandbox-player\): as you, it can read the signing key/m,
    );
    expect(result.status).toBe(0);
    const seen = attempts(repo);
    expect(seen).toMatchObject({
      read_key: 'SUCCEEDED',
      read_tokens: 'SUCCEEDED',
      signal_driver: 'SUCCEEDED',
      read_driver_environ: 'SUCCEEDED',
      see_driver: 'SUCCEEDED',
      read_ssh_key: 'SUCCEEDED',
    });
  });
});

describe('without a working sandbox', () => {
  const noSandbox = { COACHGATE_BWRAP: '/nonexistent/bwrap' };

  it('sandbox mode required refuses to start the Player, with install advice', async () => {
    repo = project('coachgate:\n  sandbox:\n    mode: required\n');
    target = machine();
    const args = ['--player-cmd', agents.player(1), '--coach-cmd', agents.coach()];
    const refused = await autobuild(repo, target, args, noSandbox);
    expect(refused.stderr).toMatch(
      /Refusing to run the Player: the base config \(or --sandbox\) requires a sandbox[^\n]*bubblewrap \(bwrap\)|Refusing to run the Player[^\n]*does not exist[^\n]*Install bubblewrap/,
    );
    expect(refused.stderr).toMatch(/apt-get install bubblewrap/);
    expect(refused.stdout).not.toMatch(/── Turn 1/);
    expect(refused.status).toBe(2);
    const optedOut = await autobuild(repo, target, [...args, '--no-sandbox-player']);
    expect(optedOut.stderr).toMatch(/Refusing --no-sandbox-player: the base config/);
    expect(optedOut.status).toBe(2);
  });

  it('sandbox mode auto runs the Player unsandboxed and says so loudly', async () => {
    repo = project();
    target = machine();
    const result = await autobuild(
      repo,
      target,
      ['--player-cmd', agents.player(1), '--coach-cmd', agents.coach(), '--max-turns', '1'],
      noSandbox,
    );
    expect(result.stdout).toMatch(/^WARNING: the Player runs NOT SANDBOXED: no working sandbox/m);
    expect(result.stdout).toMatch(/AutoBuild APPROVED after 1 turn\(s\)/);
    expect(result.status).toBe(0);
  });
});

// A usage error needs no repository.
it('--sandbox-player and --no-sandbox-player together are a usage error', () => {
  const both = spawnSync(
    process.execPath,
    [cli, 'autobuild', '--task', 'TASK-042', '--sandbox-player', '--no-sandbox-player'],
    { encoding: 'utf8' },
  );
  expect(both.stderr).toMatch(/--sandbox-player or --no-sandbox-player, not both/);
  expect(both.status).toBe(2);
});
