import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseOptions, type Print } from './options.js';
import { CallerError } from '../errors/errors.js';
import { findOnPath } from '../runner/platform.js';
import { PACKAGE_ROOT } from '../package.js';
import { existingSigningKey, initKey, privateKeyPath } from '../records/keys.js';
import { pathExists, writeFileAtomically } from '../records/files.js';
import { assertWorkTreeRoot } from '../repo/git.js';
import { UndoLog } from '../repo/undo-log.js';

const run = promisify(execFile);

/** The names the shipped agent files use: `mcp__coachgate-player__…` and `mcp__coachgate-coach__…`. */
export const SERVER_NAMES = { player: 'coachgate-player', coach: 'coachgate-coach' } as const;
export type InitScope = 'project' | 'local';

export const INIT_USAGE = `  coachgate init [--scope project|local] [--worktree DIR] [--dry-run] [--force]
                                                   set up Claude Code in a repository: the two servers,
                                                   the subagents, the signing key, a starter config`;

export interface InitOptions {
  /** The repository to set up (its top directory). */
  repository: string;
  scope: InitScope;
  dryRun: boolean;
  /** Replace agent files and server entries that differ from what init would write. */
  force: boolean;
  /** The `claude` executable, or undefined when it is not on PATH. */
  claude: string | undefined;
  /** argv that starts coachgate (the role flags are appended). */
  serverCommand: string[];
}

/** One thing init looked at: changed, already as init would leave it, or left for the user to do. */
export interface InitStep {
  outcome: 'changed' | 'unchanged' | 'todo';
  line: string;
}

const STARTER_CONFIG = `# coachgate reads this file from the base commit, never from the working tree: commit it, and a
# Player cannot relax its own gates. Every key: docs/configuration.md in the coachgate repository.
coachgate:
  max_strikes: 3 # feedback verdicts before the task is blocked
  require_evidence: true # a criterion counts only when verified by evidence
  required_gates: [tests]
# toolchain:
#   test: npm test # else coachgate detects the test command
#   test_timeout: 300
`;

/**
 * The server command for the agents' MCP host: \`coachgate\` when it is on PATH (so a checked-in
 * .mcp.json works on every machine that installed it), else this installation's node and bundle.
 */
export async function defaultServerCommand(env = process.env): Promise<string[]> {
  if (await findOnPath('coachgate', env)) return ['coachgate'];
  return [process.execPath, fileURLToPath(new URL('bundle/cli.js', PACKAGE_ROOT))];
}

/** Every step, or none: a failure part-way undoes what the earlier steps did. */
export async function runInit(options: InitOptions): Promise<InitStep[]> {
  const undo = new UndoLog();
  try {
    return [
      ...(await registerServers(options, undo)),
      ...(await installAgents(options, undo)),
      await createKey(options.dryRun, undo),
      await writeStarterConfig(options, undo),
    ];
  } catch (error) {
    const failures = await undo.undo();
    throw new CallerError(
      `could not finish: ${(error as Error).message.replace(/\.$/, '')}. ${
        failures.length === 0
          ? 'Everything it had done is undone: the repository and the state directory are as they were.'
          : `Undoing what it had done failed: ${failures.join('; ')}.`
      }`,
      'Fix the cause, then run coachgate init again.',
    );
  }
}

function serverArgs(options: InitOptions, role: keyof typeof SERVER_NAMES): string[] {
  // Project scope is checked in: no machine path; the server serves the directory the host starts it in.
  const root = options.scope === 'local' ? ['--root', options.repository] : [];
  return [...options.serverCommand.slice(1), '--role', role, ...root];
}

function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

function claudeAddArgv(options: InitOptions, name: string, args: string[]): string[] {
  return ['mcp', 'add', '--scope', options.scope, name, '--', options.serverCommand[0]!, ...args];
}

interface McpJson {
  mcpServers?: Record<string, { command?: string; args?: string[] } & Record<string, unknown>>;
}

async function readMcpJson(file: string): Promise<McpJson> {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return '{}';
    throw error;
  });
  try {
    return JSON.parse(text) as McpJson;
  } catch (error) {
    throw new CallerError(
      `${file} is not valid JSON (${(error as Error).message}).`,
      'Fix or remove it, then run coachgate init again.',
    );
  }
}

/**
 * Project scope lives in .mcp.json, which init reads to stay idempotent; it writes the file itself only
 * when `claude` is missing (the same entries `claude mcp add --scope project` writes). Local scope lives
 * in Claude Code's own settings, which only `claude` edits: without it, init prints the commands.
 */
async function registerServers(options: InitOptions, undo: UndoLog): Promise<InitStep[]> {
  const mcpJsonPath = path.join(options.repository, '.mcp.json');
  const steps: InitStep[] = [];
  for (const role of ['player', 'coach'] as const) {
    const name = SERVER_NAMES[role];
    const args = serverArgs(options, role);
    const command = options.serverCommand[0]!;
    const shown = `claude ${claudeAddArgv(options, name, args).map(shellWord).join(' ')}`;
    const existing = await registeredEntry(options, name, mcpJsonPath);
    const same =
      existing === 'present' ||
      (existing?.command === command &&
        JSON.stringify(existing.args ?? []) === JSON.stringify(args));
    if (existing && same) {
      steps.push({
        outcome: 'unchanged',
        line: `unchanged  server ${name} (${options.scope} scope)`,
      });
      continue;
    }
    if (existing && !options.force) {
      steps.push({
        outcome: 'unchanged',
        line: `kept       server ${name}: registered as ${[existing.command, ...(existing.args ?? [])].join(' ')} (--force replaces it)`,
      });
      continue;
    }
    const verb = existing ? 'replaced' : 'registered';
    if (options.dryRun) {
      steps.push({ outcome: 'changed', line: `would run  ${shown}` });
    } else if (options.claude) {
      if (existing) await claude(options, ['mcp', 'remove', '--scope', options.scope, name]);
      // Undone by re-adding the entry it replaced.
      if (existing)
        undo.add(() =>
          claude(options, [
            ...['mcp', 'add', '--scope', options.scope, name, '--'],
            ...[existing.command ?? '', ...(existing.args ?? [])],
          ]),
        );
      await claude(options, claudeAddArgv(options, name, args));
      undo.add(() => claude(options, ['mcp', 'remove', '--scope', options.scope, name]));
      steps.push({ outcome: 'changed', line: `${verb.padEnd(10)} server ${name}: ${shown}` });
    } else if (options.scope === 'project') {
      const config = await readMcpJson(mcpJsonPath);
      config.mcpServers = {
        ...config.mcpServers,
        [name]: { type: 'stdio', command, args, env: {} },
      };
      await undo.beforeWrite(mcpJsonPath);
      await writeFileAtomically(mcpJsonPath, `${JSON.stringify(config, null, 2)}\n`);
      steps.push({
        outcome: 'changed',
        line: `${verb.padEnd(10)} server ${name} in .mcp.json (claude is not on PATH)`,
      });
    } else {
      steps.push({
        outcome: 'todo',
        line: `run        ${shown}   (claude is not on PATH; local scope is Claude Code's own setting)`,
      });
    }
  }
  return steps;
}

/** 'present' when `claude mcp get` knows the name (local scope: its settings are not ours to read). */
async function registeredEntry(
  options: InitOptions,
  name: string,
  mcpJsonPath: string,
): Promise<{ command?: string; args?: string[] } | 'present' | undefined> {
  if (options.scope === 'project') return (await readMcpJson(mcpJsonPath)).mcpServers?.[name];
  if (!options.claude) return undefined;
  return (await claude(options, ['mcp', 'get', name]).then(
    () => true,
    () => false,
  ))
    ? 'present'
    : undefined;
}

async function claude(options: InitOptions, args: string[]): Promise<void> {
  try {
    await run(options.claude!, args, { cwd: options.repository, timeout: 60_000 });
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    if (args[1] === 'get') throw error;
    throw new CallerError(`claude ${args.join(' ')} failed: ${(stderr || message).trim()}`);
  }
}

/** The shipped subagents, into .claude/agents/ (where Claude Code finds project subagents). */
async function installAgents(options: InitOptions, undo: UndoLog): Promise<InitStep[]> {
  const source = new URL('agents/', PACKAGE_ROOT);
  const target = path.join(options.repository, '.claude', 'agents');
  const steps: InitStep[] = [];
  for (const file of (await readdir(source)).filter((name) => name.endsWith('.md')).sort()) {
    const shipped = await readFile(new URL(file, source), 'utf8');
    const destination = path.join(target, file);
    const relative = path.relative(options.repository, destination);
    const current = await readFile(destination, 'utf8').catch(() => undefined);
    if (current === shipped) {
      steps.push({ outcome: 'unchanged', line: `unchanged  ${relative}` });
    } else if (current !== undefined && !options.force) {
      steps.push({
        outcome: 'unchanged',
        line: `kept       ${relative}: differs from coachgate's (--force replaces it)`,
      });
    } else {
      if (!options.dryRun) {
        await undo.beforeWrite(destination);
        await mkdir(target, { recursive: true });
        await writeFileAtomically(destination, shipped);
      }
      const [verb, done] =
        current === undefined ? ['install', 'installed'] : ['replace', 'replaced'];
      steps.push({
        outcome: 'changed',
        line: options.dryRun ? `would ${verb} ${relative}` : `${done.padEnd(10)} ${relative}`,
      });
    }
  }
  return steps;
}

async function createKey(dryRun: boolean, undo: UndoLog): Promise<InitStep> {
  const existing = await existingSigningKey();
  if (existing) {
    return {
      outcome: 'unchanged',
      line: `unchanged  signing key ${existing.key_id} (${privateKeyPath()})`,
    };
  }
  if (dryRun)
    return { outcome: 'changed', line: `would create the signing key ${privateKeyPath()}` };
  await undo.beforeWrite(privateKeyPath());
  const { key } = await initKey();
  return { outcome: 'changed', line: `created    signing key ${key.key_id} (${privateKeyPath()})` };
}

async function writeStarterConfig(options: InitOptions, undo: UndoLog): Promise<InitStep> {
  const file = path.join(options.repository, '.guardkit', 'config.yaml');
  if (await pathExists(file))
    return { outcome: 'unchanged', line: 'unchanged  .guardkit/config.yaml' };
  if (options.dryRun) return { outcome: 'changed', line: 'would write .guardkit/config.yaml' };
  await undo.beforeWrite(file);
  await mkdir(path.dirname(file), { recursive: true });
  // 'wx': a config written meanwhile by someone else is never replaced.
  await writeFile(file, STARTER_CONFIG, { flag: 'wx' });
  return { outcome: 'changed', line: 'wrote      .guardkit/config.yaml (a starter: commit it)' };
}

/** `coachgate init`: exit 0 when done (or nothing to do), 2 for a caller mistake. */
export async function initCommand(args: string[], print: Print): Promise<number> {
  const { values, positionals } = parseOptions(args, {
    scope: { type: 'string' },
    worktree: { type: 'string' },
    'dry-run': { type: 'boolean' },
    force: { type: 'boolean' },
  });
  if (positionals.length > 0)
    throw new CallerError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const scope = values.scope ?? 'project';
  if (scope !== 'project' && scope !== 'local')
    throw new CallerError(`--scope must be project or local, not ${JSON.stringify(scope)}`);
  const repository = path.resolve(values.worktree ?? '.');
  // A path that does not exist, or is no repository's top, is refused before anything is written.
  await assertWorkTreeRoot(repository);
  const options: InitOptions = {
    repository,
    scope,
    dryRun: values['dry-run'] === true,
    force: values.force === true,
    claude: await findOnPath('claude'),
    serverCommand: await defaultServerCommand(),
  };
  const steps = await runInit(options);
  const outcomes = new Set(steps.map((step) => step.outcome));
  print(
    [
      `coachgate init: ${repository} (${scope} scope${options.dryRun ? ', dry run' : ''})`,
      ...steps.map((step) => `  ${step.line}`),
      options.dryRun
        ? 'Dry run: nothing was changed.'
        : outcomes.has('changed') || outcomes.has('todo')
          ? `${outcomes.has('todo') ? 'Run the commands marked "run" above.\n' : ''}${NEXT_STEPS[scope]}`
          : 'Nothing changed: this repository was already set up.',
    ].join('\n'),
  );
  return 0;
}

const FIRST_LOOP = `check both with /mcp or \`claude mcp list\`, then run /mcp__coachgate-coach__autobuild TASK-001
(create the task first with \`coachgate task new\`).`;

/** Local scope registers the servers for this user only: no .mcp.json to commit, nothing to approve. */
const NEXT_STEPS: Record<'project' | 'local', string> = {
  project: `Next: commit .mcp.json, .claude/agents/ and .guardkit/config.yaml (the server reads the config
from the base commit). Start Claude Code here (it asks once to approve the project's servers),
${FIRST_LOOP}`,
  local: `Next: commit .claude/agents/ and .guardkit/config.yaml (the server reads the config from the base
commit); the servers are registered for you only, so there is no .mcp.json to commit or approve. Start
Claude Code here, ${FIRST_LOOP}`,
};
