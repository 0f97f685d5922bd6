import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadTrustedConfig } from '../repo/trusted-config.js';
import { defaultPython, findOnPath, loginShellProgram } from '../runner/platform.js';
import { detectSandbox, INSTALL_ADVICE } from '../sandbox/backend.js';
import { effectivePolicy } from '../sandbox/policy.js';
import { VERSION } from '../package.js';
import { assertWorkTreeRoot } from '../repo/git.js';

const run = promisify(execFile);

export interface ToolCheck {
  name: string;
  /** Absolute path found on PATH, or undefined when the server cannot find it. */
  path?: string;
  version?: string;
}

export interface DoctorReport {
  coachgate: string;
  node: { version: string; path: string };
  platform: string;
  login_shell: string;
  path_entries: string[];
  tools: ToolCheck[];
  sandbox: SandboxCheck;
}

/** The sandbox runs of the Player's code get here, and why. */
export interface SandboxCheck {
  backend: string;
  reason: string;
  mode: string;
  network: string;
  /** Where the policy came from: the base config of the repository doctor runs in, or the default. */
  policy_source: string;
  verdict: string;
}

/** What test runs need; GUI-launched hosts (Claude Desktop) often start servers with a PATH missing them. */
const TOOLS: { name: string; args: string[] }[] = [
  { name: 'node', args: ['--version'] },
  { name: 'npm', args: ['--version'] },
  { name: 'pnpm', args: ['--version'] },
  { name: 'yarn', args: ['--version'] },
  // A project whose packageManager names pnpm or yarn runs through it when they are missing.
  { name: 'corepack', args: ['--version'] },
  { name: defaultPython(), args: ['--version'] },
  ...(process.platform === 'win32' ? [{ name: 'py', args: ['--version'] }] : []),
  { name: 'go', args: ['version'] },
  { name: 'cargo', args: ['--version'] },
  { name: 'git', args: ['--version'] },
];

async function versionOf(program: string, args: string[]): Promise<string | undefined> {
  const output = await run(program, args, {
    timeout: 10_000,
    shell: process.platform === 'win32' && /\.(cmd|bat)$/i.test(program),
  })
    .then(({ stdout, stderr }) => `${stdout}${stderr}`)
    .catch(() => undefined);
  return output?.trim().split('\n')[0];
}

/** Everything the server will find when it runs tests, as this process (and so the MCP host) sees it. */
export async function doctorReport(env: NodeJS.ProcessEnv = process.env): Promise<DoctorReport> {
  const tools = await Promise.all(
    TOOLS.map(async ({ name, args }): Promise<ToolCheck> => {
      const found = await findOnPath(name, env);
      const version = found ? await versionOf(found, args) : undefined;
      return { name, ...(found ? { path: found } : {}), ...(version ? { version } : {}) };
    }),
  );
  const python = tools.find((tool) => tool.name === defaultPython())?.path;
  const pytest = python ? await versionOf(python, ['-m', 'pytest', '--version']) : undefined;
  tools.push({
    name: 'pytest',
    ...(python && pytest?.startsWith('pytest')
      ? { path: `${python} -m pytest`, version: pytest }
      : {}),
  });
  return {
    sandbox: await sandboxCheck(),
    coachgate: VERSION,
    node: { version: process.version, path: process.execPath },
    platform: `${process.platform} ${process.arch}`,
    login_shell: process.platform === 'win32' ? 'none (cmd /c)' : loginShellProgram(),
    path_entries: (env.PATH ?? '').split(path.delimiter).filter(Boolean),
    tools,
  };
}

async function sandboxCheck(cwd = process.cwd()): Promise<SandboxCheck> {
  const backend = await detectSandbox();
  // In a repository whose base config cannot be read (invalid, no commits) doctor says why.
  const inRepository = await assertWorkTreeRoot(cwd).then(
    () => true,
    () => false,
  );
  let unread = 'not in a repository';
  const trusted = inRepository
    ? await loadTrustedConfig(cwd).catch((error: unknown) => {
        unread = `the repository's base config could not be read: ${(error as Error).message}`;
        return undefined;
      })
    : undefined;
  const policy = effectivePolicy(trusted?.config.coachgate.sandbox);
  const confined = backend.name !== 'none' && policy.mode !== 'off';
  const verdict = confined
    ? `test runs, gates and builds run inside ${backend.name} (network ${policy.network})`
    : policy.mode === 'required'
      ? `every run is REFUSED: the policy requires a sandbox. ${INSTALL_ADVICE}`
      : `runs are NOT SANDBOXED (${policy.mode === 'off' ? 'the policy is off' : 'no working sandbox'}): the Player's code runs with the server's authority, and every record says so. ${policy.mode === 'off' ? '' : INSTALL_ADVICE}`.trim();
  return {
    backend: backend.name,
    reason: backend.reason,
    mode: policy.mode,
    network: policy.network,
    policy_source: trusted
      ? `.guardkit/config.yaml at ${trusted.base.commit.slice(0, 12)} (${cwd})`
      : `the default (${unread})`,
    verdict,
  };
}

export function formatDoctorReport(report: DoctorReport): string {
  const missing = report.tools.filter((tool) => !tool.path).map((tool) => tool.name);
  return [
    `coachgate ${report.coachgate} doctor — what the server finds when it runs tests`,
    `node      ${report.node.version} at ${report.node.path}`,
    `platform  ${report.platform}; login-shell runs use ${report.login_shell}`,
    'PATH as the server sees it:',
    ...report.path_entries.map((entry) => `  ${entry}`),
    'Tools:',
    ...report.tools.map(
      (tool) =>
        `  ${tool.name.padEnd(8)} ${tool.path ? `${tool.path}${tool.version ? `  (${tool.version})` : ''}` : 'NOT FOUND'}`,
    ),
    ...(missing.some((name) => name === 'pnpm' || name === 'yarn') && !missing.includes('corepack')
      ? [
          'pnpm/yarn: a project that declares them in packageManager runs through corepack, else the ' +
            "project's own node_modules/.bin; each run's env.notes says which.",
        ]
      : []),
    missing.length === 0
      ? 'Everything was found.'
      : `Not found on this PATH: ${missing.join(', ')}. If your MCP host is a GUI app (Claude Desktop), it may start ` +
        'coachgate with a shorter PATH than your terminal: set "env": {"PATH": "..."} in its server config.',
    `Sandbox   ${report.sandbox.backend}: ${report.sandbox.reason}`,
    `  policy  mode ${report.sandbox.mode}, network ${report.sandbox.network}, from ${report.sandbox.policy_source}`,
    `  so      ${report.sandbox.verdict}`,
  ].join('\n');
}
