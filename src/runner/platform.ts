import { access, constants } from 'node:fs/promises';
import path from 'node:path';

/** POSIX-compatible shells whose `-lc` reads the user's login profile and runs one command line. */
const LOGIN_SHELLS = new Set(['bash', 'zsh', 'ksh', 'mksh', 'dash', 'sh']);

/**
 * The shell `login-shell` runs tests under: the user's own ($SHELL, zsh by default on macOS) so toolchains set
 * up in its profile are found; bash when $SHELL is unset or not POSIX-compatible (fish, nu), zsh on macOS.
 */
export function loginShellProgram(
  platform: NodeJS.Platform = process.platform,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const shell = env.SHELL;
  if (shell && path.posix.isAbsolute(shell) && LOGIN_SHELLS.has(path.posix.basename(shell)))
    return shell;
  return platform === 'darwin' ? '/bin/zsh' : 'bash';
}

/** argv that runs a command line in the user's login shell; Windows has none, so `cmd` runs it. */
export function loginShellArgv(
  commandLine: string,
  platform: NodeJS.Platform = process.platform,
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  if (platform === 'win32') return commandShellArgv(commandLine, platform, env);
  return [loginShellProgram(platform, env), '-lc', commandLine];
}

/** argv for a configured command line: `sh -c` on POSIX, `cmd /d /s /c` on Windows (cmd-compatible commands). */
export function commandShellArgv(
  commandLine: string,
  platform: NodeJS.Platform = process.platform,
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  if (platform === 'win32') return [env.ComSpec ?? 'cmd.exe', '/d', '/s', '/c', commandLine];
  return ['sh', '-c', commandLine];
}

/** How a shell argv is reported in run records: `sh -c`, `zsh -lc`, `cmd.exe /c`. */
export function shellLabel(argv: string[]): string {
  const program = argv[0]!.split(/[\\/]/).pop()!;
  return `${program} ${argv.at(-2) === '/c' ? '/c' : argv[1]}`;
}

/** The Python interpreter when the project has no virtualenv: Windows installs name it `python` (or `py`). */
export function defaultPython(platform: NodeJS.Platform = process.platform): string {
  return platform === 'win32' ? 'python' : 'python3';
}

/** A virtualenv's scripts directory and interpreter: `bin/python` on POSIX, `Scripts\python.exe` on Windows. */
export function virtualenvLayout(
  venv: string,
  platform: NodeJS.Platform = process.platform,
): { bin: string; python: string } {
  const join = platform === 'win32' ? path.win32.join : path.posix.join;
  return platform === 'win32'
    ? { bin: join(venv, 'Scripts'), python: join(venv, 'Scripts', 'python.exe') }
    : { bin: join(venv, 'bin'), python: join(venv, 'bin', 'python') };
}

/** Looks a program up on PATH the way a spawn would (PATHEXT on Windows). */
export async function findOnPath(
  name: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string | undefined> {
  const extensions =
    process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT;.COM').split(';') : [''];
  const candidates = (env.PATH ?? '')
    .split(path.delimiter)
    .filter(Boolean)
    .flatMap((directory) => extensions.map((extension) => path.join(directory, name + extension)));
  // Asked side by side (the first runnable one in PATH order wins): one at a time, the misses
  // before /usr/bin cost a run about 1.5 ms.
  const runnable = await Promise.all(
    candidates.map((candidate) =>
      access(candidate, constants.X_OK).then(
        () => true,
        () => false,
      ),
    ),
  );
  const first = runnable.indexOf(true);
  return first === -1 ? undefined : candidates[first];
}
