import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { parse as parseYaml } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/config.js';
import { parseTaskMarkdown } from '../src/tasks/task.js';
import { parseValidatorVerdict } from '../src/verdicts/validator-verdict.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EXAMPLE = path.join(ROOT, 'examples', 'greeting');
const AGENTS = path.join(ROOT, 'agents');

const tempDirs: string[] = [];
afterEach(() => {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The example as the demo's worktree holds it after Player turn `turn`: the base, then turns 1..turn copied over it. */
function projectAfterTurn(turn: number): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-greeting-'));
  tempDirs.push(dir);
  cpSync(EXAMPLE, dir, {
    recursive: true,
    filter: (source) => path.relative(EXAMPLE, source).split(path.sep)[0] !== 'turns',
  });
  for (let n = 1; n <= turn; n++)
    cpSync(path.join(EXAMPLE, 'turns', String(n)), dir, { recursive: true });
  return dir;
}

/** Runs node's test runner in `dir` and reads the top-level TAP result lines. */
async function runNodeTests(dir: string) {
  const result = await execa(process.execPath, ['--test', '--test-reporter=tap'], {
    cwd: dir,
    reject: false,
    all: true,
  });
  const outcomes = [...result.stdout.matchAll(/^(not )?ok \d+ - (.+)$/gm)];
  return {
    exitCode: result.exitCode,
    output: result.all ?? '',
    passed: outcomes.filter((match) => !match[1]).map((match) => match[2]),
    failed: outcomes.filter((match) => match[1]).map((match) => match[2]),
  };
}

describe('examples/greeting', () => {
  it('turn 1 fails only the trimming test, with an assertion diff that shows the untrimmed name', async () => {
    const run = await runNodeTests(projectAfterTurn(1));
    expect(run.exitCode).toBe(1);
    expect(run.passed).toEqual(['greets by name', 'rejects blank names']);
    expect(run.failed).toEqual(['trims names before greeting']);
    expect(run.output).toContain("+ 'Hello,   Ada  !'");
    expect(run.output).toContain("- 'Hello, Ada!'");
  });

  it('turn 2 fixes the implementation only, and all three tests pass', async () => {
    expect(
      readdirSync(path.join(EXAMPLE, 'turns', '2'), { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => entry.name),
    ).toEqual(['greet.js']);
    const run = await runNodeTests(projectAfterTurn(2));
    expect(run.exitCode).toBe(0);
    expect(run.passed).toEqual([
      'greets by name',
      'rejects blank names',
      'trims names before greeting',
    ]);
    expect(run.failed).toEqual([]);
  });

  it('has a backlog task with exactly the three criteria AC-001..AC-003, unchecked', () => {
    const file = '.guardkit/tasks/backlog/TASK-GREET-001-greeting.md';
    const task = parseTaskMarkdown(readFileSync(path.join(EXAMPLE, file), 'utf8'), file);
    expect(task).toMatchObject({ id: 'TASK-GREET-001', status: 'backlog', task_type: 'feature' });
    expect(task.acceptance_criteria.map(({ id, checked }) => ({ id, checked }))).toEqual([
      { id: 'AC-001', checked: false },
      { id: 'AC-002', checked: false },
      { id: 'AC-003', checked: false },
    ]);
  });

  it('has a config that leaves test detection to package.json and sets three strikes', () => {
    const { config, warnings } = parseConfig(
      readFileSync(path.join(EXAMPLE, '.guardkit', 'config.yaml'), 'utf8'),
    );
    expect(warnings).toEqual([]);
    expect(config.toolchain).toBeUndefined();
    expect(config.coachgate.max_strikes).toBe(3);
  });
});

interface AgentFile {
  front: { name?: unknown; description?: unknown; tools?: unknown };
  tools: string[];
  body: string;
}

function readAgent(name: string): AgentFile {
  const text = readFileSync(path.join(AGENTS, `${name}.md`), 'utf8');
  const match = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text);
  if (!match) throw new Error(`agents/${name}.md has no YAML front matter`);
  const front = parseYaml(match[1]!) as AgentFile['front'];
  const tools =
    typeof front.tools === 'string' ? front.tools.split(',').map((tool) => tool.trim()) : [];
  return { front, tools, body: match[2]! };
}

describe('agents', () => {
  it.each(['autobuild-player', 'autobuild-coach', 'validator'])(
    '%s has front matter with its name, a description and tools',
    (name) => {
      const agent = readAgent(name);
      expect(agent.front.name).toBe(name);
      expect(
        typeof agent.front.description === 'string' && agent.front.description.length > 40,
      ).toBe(true);
      expect(agent.tools.length).toBeGreaterThan(0);
      expect(agent.tools.every((tool) => /^[A-Za-z][\w-]*$/.test(tool))).toBe(true);
    },
  );

  it('the coach cannot write or run commands, and may call every coachgate tool its body names', () => {
    const coach = readAgent('autobuild-coach');
    for (const forbidden of [
      'Write',
      'Edit',
      'MultiEdit',
      'NotebookEdit',
      'Bash',
      'mcp__coachgate-coach__record_player_report',
      'mcp__coachgate-player__record_verdict',
    ]) {
      expect(coach.tools).not.toContain(forbidden);
    }
    const named = new Set(coach.body.match(/mcp__coachgate[\w-]*__\w+/g));
    expect([...named].every((tool) => tool.startsWith('mcp__coachgate-coach__'))).toBe(true);
    expect([...named].filter((tool) => !coach.tools.includes(tool))).toEqual([]);
  });

  it('the coach body walks the review in order, from load_task to record_verdict', () => {
    const { body } = readAgent('autobuild-coach');
    const order = [
      'load_task',
      'read_task_work_results',
      'verify_quality_gates',
      'run_independent_tests',
      'check_test_integrity',
      'validate_requirements',
      'record_verdict',
    ];
    const positions = order.map((tool) => body.indexOf(`mcp__coachgate-coach__${tool}`));
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });

  it('the player records its report but cannot record a verdict', () => {
    const player = readAgent('autobuild-player');
    expect(player.tools).toEqual(
      expect.arrayContaining([
        'Write',
        'Edit',
        'Bash',
        'mcp__coachgate-player__load_task',
        'mcp__coachgate-player__record_player_report',
      ]),
    );
    // Through the coachgate-player server only: that server does not even list a verdict tool.
    expect(
      player.tools.filter(
        (tool) => tool.startsWith('mcp__') && !tool.startsWith('mcp__coachgate-player__'),
      ),
    ).toEqual([]);
    expect(player.tools.filter((tool) => tool.endsWith('__record_verdict'))).toEqual([]);
  });

  it("the validator's example ending parses to the verdict and located findings it describes", () => {
    const { body } = readAgent('validator');
    const example = /```\n([\s\S]*?)```/.exec(body)?.[1];
    expect(example).toBeDefined();
    const verdict = parseValidatorVerdict(example!);
    expect(verdict.verdict).toBe('FAIL');
    expect(verdict.findings.map(({ level, location }) => ({ level, location }))).toEqual([
      { level: 'error', location: 'src/greet.js:6' },
      { level: 'warn', location: 'test/greet.test.js:9' },
      { level: 'info', location: 'README.md' },
    ]);
  });
});
