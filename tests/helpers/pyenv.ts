import { execFileSync } from 'node:child_process';
import path from 'node:path';

export interface MachinePyenv {
  root: string;
  shims: string;
  /** The global version, when it is an installed one (not `system`). */
  global: string;
  /** An installed Python 3 other than the global one, matching `wanted`. */
  other: string;
}

/** The machine's real pyenv, with a second Python 3 besides the global one; undefined without. */
export function machinePyenv(wanted = /^3\.\d+\.\d+$/): MachinePyenv | undefined {
  try {
    const pyenv = (...args: string[]) => execFileSync('pyenv', args, { encoding: 'utf8' }).trim();
    const root = pyenv('root');
    const global = pyenv('global').split('\n')[0]!;
    const other = pyenv('versions', '--bare', '--skip-aliases')
      .split('\n')
      .find((name) => wanted.test(name) && name !== global);
    return other && /^\d/.test(global)
      ? { root, shims: path.join(root, 'shims'), global, other }
      : undefined;
  } catch {
    return undefined;
  }
}
