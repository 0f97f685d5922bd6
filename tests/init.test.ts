import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { makeRepo, type TempRepo } from './helpers/git-repo.js';
import { CLI } from './helpers/cli.js';

const AGENTS = fileURLToPath(new URL('../agents/', import.meta.url));

/**
 * A stand-in for Claude Code's `claude` CLI: records its argv, and keeps `mcp add/get/remove` state the
 * way claude does (project scope in the repository's .mcp.json, local scope in a file of its own).
 */
const FAKE_CLAUDE = `#!/usr/bin/env node
const fs = require('node:fs');
const path = require('node:path');
const args = process.argv.slice(2);
fs.appendFileSync(process.env.FAKE_CLAUDE_LOG, JSON.stringify({ cwd: process.cwd(), args }) + '\\n');
const file = (scope) => scope === 'project' ? path.join(process.cwd(), '.mcp.json') : process.env.FAKE_CLAUDE_LOCAL;
const read = (scope) => fs.existsSync(file(scope)) ? JSON.parse(fs.readFileSync(file(scope), 'utf8')) : { mcpServers: {} };
const write = (scope, data) => fs.writeFileSync(file(scope), JSON.stringify(data, null, 2));
if (args[0] !== 'mcp') process.exit(1);
if (args[1] === 'get') process.exit(['project', 'local'].some((s) => read(s).mcpServers[args[2]]) ? 0 : 1);
const scope = args[args.indexOf('--scope') + 1];
const data = read(scope);
if (args[1] === 'remove') { delete data.mcpServers[args[4]]; write(scope, data); process.exit(0); }
if (args[1] === 'add') {
  const name = args[4];
  if (data.mcpServers[name]) { console.error('MCP server ' + name + ' already exists'); process.exit(1); }
  const [command, ...rest] = args.slice(args.indexOf('--') + 1);
  data.mcpServers[name] = { type: 'stdio', command, args: rest, env: {} };
  write(scope, data);
  process.exit(0);
}
process.exit(1);
`;

interface Sandbox {
  repo: TempRepo;
  home: string;
  bin: string;
  log: string;
  local: string;
  state: string;
}

let sandboxes: Sandbox[] = [];

afterEach(() => {
  for (const sandbox of sandboxes) {
    sandbox.repo.remove();
    rmSync(sandbox.home, { recursive: true, force: true });
  }
  sandboxes = [];
});

function sandbox(options: { claude: boolean; coachgate?: boolean }): Sandbox {
  const repo = makeRepo({ 'README.md': '# sample\n' }, 'coachgate-init-');
  const home = mkdtempSync(path.join(os.tmpdir(), 'coachgate-init-home-'));
  const bin = path.join(home, 'bin');
  mkdirSync(bin);
  if (options.claude) {
    writeFileSync(path.join(bin, 'claude'), FAKE_CLAUDE);
    chmodSync(path.join(bin, 'claude'), 0o755);
  }
  if (options.coachgate) {
    writeFileSync(path.join(bin, 'coachgate'), '#!/bin/sh\nexit 0\n');
    chmodSync(path.join(bin, 'coachgate'), 0o755);
  }
  const created = {
    repo,
    home,
    bin,
    log: path.join(home, 'claude.log'),
    local: path.join(home, 'claude-local.json'),
    state: path.join(home, 'state'),
  };
  sandboxes.push(created);
  return created;
}

function init(box: Sandbox, ...args: string[]) {
  const result = spawnSync(process.execPath, [CLI, 'init', ...args], {
    cwd: box.repo.dir,
    encoding: 'utf8',
    env: {
      // Only the fake bin, node's and the system's: no real claude or coachgate.
      PATH: [box.bin, path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter),
      HOME: box.home,
      COACHGATE_STATE_DIR: box.state,
      FAKE_CLAUDE_LOG: box.log,
      FAKE_CLAUDE_LOCAL: box.local,
    },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function claudeCalls(box: Sandbox): string[][] {
  if (!existsSync(box.log)) return [];
  return readFileSync(box.log, 'utf8')
    .trim()
    .split('\n')
    .map((line) => (JSON.parse(line) as { args: string[] }).args);
}

function mcpJson(box: Sandbox): Record<string, { command: string; args: string[] }> {
  return (
    JSON.parse(readFileSync(path.join(box.repo.dir, '.mcp.json'), 'utf8')) as {
      mcpServers: Record<string, { command: string; args: string[] }>;
    }
  ).mcpServers;
}

const shippedAgents = readdirSync(AGENTS).filter((file) => file.endsWith('.md'));

describe('coachgate init', () => {
  it('registers both servers through claude (project scope), installs the agents, the key and a config; a second run changes nothing', () => {
    const box = sandbox({ claude: true });
    const first = init(box);
    expect(first.status, first.stderr).toBe(0);
    const bundle = fileURLToPath(new URL('../bundle/cli.js', import.meta.url));
    expect(claudeCalls(box)).toEqual([
      [
        'mcp',
        'add',
        '--scope',
        'project',
        'coachgate-player',
        '--',
        process.execPath,
        bundle,
        '--role',
        'player',
      ],
      [
        'mcp',
        'add',
        '--scope',
        'project',
        'coachgate-coach',
        '--',
        process.execPath,
        bundle,
        '--role',
        'coach',
      ],
    ]);
    expect(Object.keys(mcpJson(box)).sort()).toEqual(['coachgate-coach', 'coachgate-player']);
    for (const file of shippedAgents) {
      expect(readFileSync(path.join(box.repo.dir, '.claude/agents', file), 'utf8')).toBe(
        readFileSync(path.join(AGENTS, file), 'utf8'),
      );
    }
    expect(existsSync(path.join(box.state, 'keys/ed25519.pem'))).toBe(true);
    expect(readFileSync(path.join(box.repo.dir, '.guardkit/config.yaml'), 'utf8')).toMatch(
      /^coachgate:\n {2}max_strikes: 3/m,
    );
    expect(first.stdout).toMatch(
      /registered server coachgate-player: claude mcp add --scope project/,
    );
    expect(first.stdout).toMatch(/created {4}signing key [0-9a-f]{16}/);
    expect(first.stdout).toMatch(/installed {2}\.claude\/agents\/autobuild-player\.md/);
    expect(first.stdout).toMatch(/\/mcp__coachgate-coach__autobuild TASK-001/);

    const second = init(box);
    expect(second.status, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/Nothing changed: this repository was already set up\.\n$/);
    expect(second.stdout).not.toMatch(/^ {2}(registered|installed|created|wrote)/m);
    expect(claudeCalls(box)).toHaveLength(2);
  });

  it('--dry-run says what it would do and changes nothing', () => {
    const box = sandbox({ claude: true });
    const result = init(box, '--dry-run');
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(
      /would run {2}claude mcp add --scope project coachgate-coach -- /,
    );
    expect(result.stdout).toMatch(/would install \.claude\/agents\/autobuild-coach\.md/);
    expect(result.stdout).toMatch(/Dry run: nothing was changed\.\n$/);
    expect(claudeCalls(box)).toEqual([]);
    for (const file of ['.mcp.json', '.claude', '.guardkit']) {
      expect(existsSync(path.join(box.repo.dir, file)), file).toBe(false);
    }
    expect(existsSync(path.join(box.state, 'keys'))).toBe(false);
  });

  it('without claude on PATH, writes the project .mcp.json itself, using the coachgate on PATH', () => {
    const box = sandbox({ claude: false, coachgate: true });
    const result = init(box);
    expect(result.status, result.stderr).toBe(0);
    expect(mcpJson(box)).toEqual({
      'coachgate-player': {
        type: 'stdio',
        command: 'coachgate',
        args: ['--role', 'player'],
        env: {},
      },
      'coachgate-coach': {
        type: 'stdio',
        command: 'coachgate',
        args: ['--role', 'coach'],
        env: {},
      },
    });
    // The agent files name exactly the servers init registered.
    const named = new Set(
      shippedAgents.flatMap((file) =>
        [...readFileSync(path.join(AGENTS, file), 'utf8').matchAll(/mcp__([\w-]+?)__\w+/g)].map(
          (match) => match[1],
        ),
      ),
    );
    expect([...named].sort()).toEqual(Object.keys(mcpJson(box)).sort());
    expect(init(box).stdout).toMatch(/Nothing changed/);
  });

  it('local scope registers with --root through claude, and checks with claude mcp get next time', () => {
    const box = sandbox({ claude: true });
    const first = init(box, '--scope', 'local');
    expect(first.status).toBe(0);
    // Its next steps are local scope's: no .mcp.json to commit or approve.
    expect(first.stdout).toMatch(/Next: commit \.claude\/agents\/ and \.guardkit\/config\.yaml/);
    expect(first.stdout).toMatch(/no \.mcp\.json to commit or approve/);
    expect(first.stdout).not.toMatch(/commit \.mcp\.json|approve the project's servers/);
    const repo = readFileSync(path.join(box.repo.dir, '.git/HEAD')) && box.repo.dir;
    expect(claudeCalls(box).filter((args) => args[1] === 'add')).toEqual([
      expect.arrayContaining([
        '--scope',
        'local',
        'coachgate-player',
        '--role',
        'player',
        '--root',
        repo,
      ]),
      expect.arrayContaining([
        '--scope',
        'local',
        'coachgate-coach',
        '--role',
        'coach',
        '--root',
        repo,
      ]),
    ]);
    expect(existsSync(path.join(box.repo.dir, '.mcp.json'))).toBe(false);
    const second = init(box, '--scope', 'local');
    expect(second.stdout).toMatch(/unchanged {2}server coachgate-coach \(local scope\)/);
    expect(claudeCalls(box).filter((args) => args[1] === 'add')).toHaveLength(2);
  });

  it('local scope without claude prints the exact commands to run', () => {
    const box = sandbox({ claude: false });
    const result = init(box, '--scope', 'local');
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(
      /run {8}claude mcp add --scope local coachgate-player -- \S+ \S+ --role player --root /,
    );
    // On a line of its own: the next steps after it keep their line breaks.
    expect(result.stdout).toMatch(
      /^Run the commands marked "run" above\.\nNext: commit \S+ and \S+ \(the server reads the config from the base\n/m,
    );
  });

  it('keeps an agent file the user changed unless --force', () => {
    const box = sandbox({ claude: true });
    box.repo.write('.claude/agents/autobuild-coach.md', 'my own coach\n');
    const kept = init(box);
    expect(kept.stdout).toMatch(/kept {7}\.claude\/agents\/autobuild-coach\.md: differs/);
    expect(readFileSync(path.join(box.repo.dir, '.claude/agents/autobuild-coach.md'), 'utf8')).toBe(
      'my own coach\n',
    );
    expect(init(box, '--force').stdout).toMatch(
      /replaced {3}\.claude\/agents\/autobuild-coach\.md/,
    );
  });

  it('refuses a directory that is not the top of a git repository (exit 2)', () => {
    const box = sandbox({ claude: true });
    const result = init(box, '--worktree', box.bin);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/is not a git repository/);
  });

  it('refuses a path that does not exist, before anything is written (exit 2)', () => {
    const box = sandbox({ claude: false });
    const missing = path.join(box.home, 'no', 'such', 'repo');
    const result = init(box, '--worktree', missing);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(`${missing} does not exist.`);
    expect(existsSync(path.join(box.home, 'no'))).toBe(false);
    expect(existsSync(box.state)).toBe(false);
  });

  /** Every file under the repository and the state directory, with its content. */
  function everything(box: Sandbox): string[] {
    return [box.repo.dir, box.state].flatMap((root) =>
      existsSync(root)
        ? readdirSync(root, { recursive: true, withFileTypes: true })
            .filter((entry) => !path.join(entry.parentPath, entry.name).includes('/.git'))
            .map((entry) => {
              const file = path.join(entry.parentPath, entry.name);
              return entry.isFile() ? `${file} ${readFileSync(file, 'utf8')}` : file;
            })
            .sort()
        : [],
    );
  }

  for (const claude of [false, true])
    it(`stopped part-way (${claude ? 'through claude' : 'writing .mcp.json'}), leaves the repository, claude's registrations and the state as they were`, () => {
      const box = sandbox({ claude });
      // The last step, the starter config, cannot be written: .guardkit is a file.
      box.repo.write('.guardkit', 'not a directory\n');
      // As claude writes it, so that its own rewrite on `mcp remove` changes no byte.
      const other = { mcpServers: { other: { command: 'x', args: [] } } };
      box.repo.write('.mcp.json', JSON.stringify(other, null, 2));
      const before = everything(box);
      const result = init(box);
      expect(result.status).toBe(2);
      expect(result.stderr).toMatch(/^coachgate init: could not finish: EEXIST: .*\.guardkit/);
      expect(result.stderr).toContain(
        'Everything it had done is undone: the repository and the state directory are as they were.',
      );
      expect(everything(box)).toEqual(before);
      if (claude) {
        const added = claudeCalls(box).filter((args) => args[1] === 'add');
        const removed = claudeCalls(box).filter((args) => args[1] === 'remove');
        expect(added.map((args) => args[4])).toEqual(['coachgate-player', 'coachgate-coach']);
        expect(removed.map((args) => args[4])).toEqual(['coachgate-coach', 'coachgate-player']);
      }
      // Its cause fixed, init runs whole.
      rmSync(path.join(box.repo.dir, '.guardkit'));
      expect(init(box).status).toBe(0);
      expect(Object.keys(mcpJson(box)).sort()).toEqual([
        'coachgate-coach',
        'coachgate-player',
        'other',
      ]);
    });
});
