import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildInvocation } from '../../src/runner/invocation.js';
import {
  commandShellArgv,
  defaultPython,
  findOnPath,
  loginShellArgv,
  loginShellProgram,
  shellLabel,
  virtualenvLayout,
} from '../../src/runner/platform.js';

describe("login shell: the user's own, not always bash", () => {
  it('uses $SHELL when it is a POSIX-compatible shell (zsh on macOS sees its profile)', () => {
    expect(loginShellArgv('npm test', 'darwin', { SHELL: '/bin/zsh' })).toEqual([
      '/bin/zsh',
      '-lc',
      'npm test',
    ]);
    expect(loginShellArgv('npm test', 'linux', { SHELL: '/usr/bin/bash' })).toEqual([
      '/usr/bin/bash',
      '-lc',
      'npm test',
    ]);
  });

  it('falls back to zsh on macOS and bash elsewhere when $SHELL is unset or not POSIX (fish)', () => {
    expect(loginShellProgram('darwin', {})).toBe('/bin/zsh');
    expect(loginShellProgram('linux', { SHELL: '/usr/bin/fish' })).toBe('bash');
    expect(loginShellProgram('linux', { SHELL: 'zsh' })).toBe('bash');
  });

  it('Windows: config commands and login-shell runs go through cmd /d /s /c', () => {
    expect(
      commandShellArgv('pytest -q', 'win32', { ComSpec: 'C:\\Windows\\system32\\cmd.exe' }),
    ).toEqual(['C:\\Windows\\system32\\cmd.exe', '/d', '/s', '/c', 'pytest -q']);
    expect(loginShellArgv('pytest -q', 'win32', {})).toEqual([
      'cmd.exe',
      '/d',
      '/s',
      '/c',
      'pytest -q',
    ]);
    expect(shellLabel(['C:\\Windows\\system32\\cmd.exe', '/d', '/s', '/c', 'x'])).toBe(
      'cmd.exe /c',
    );
    expect(shellLabel(['/bin/zsh', '-lc', 'x'])).toBe('zsh -lc');
  });

  it('Windows: python (not python3) and Scripts\\python.exe virtualenvs', () => {
    expect(defaultPython('win32')).toBe('python');
    expect(defaultPython('linux')).toBe('python3');
    expect(virtualenvLayout('C:\\p\\.venv', 'win32')).toEqual({
      bin: 'C:\\p\\.venv\\Scripts',
      python: 'C:\\p\\.venv\\Scripts\\python.exe',
    });
    expect(virtualenvLayout('/p/.venv', 'darwin')).toEqual({
      bin: '/p/.venv/bin',
      python: '/p/.venv/bin/python',
    });
  });

  it('the invocation reports the shell it really used', () => {
    const environment = { env: {}, shell: 'none', path_prefix: [], notes: [] };
    const invocation = buildInvocation(
      { runner: 'custom', shellCommand: 'make test' } as never,
      environment,
      '/tmp/r',
      true,
    );
    expect(invocation.argv.slice(1)).toEqual(['-lc', 'make test']);
    expect(invocation.shell).toBe(`${invocation.argv[0]!.split('/').pop()} -lc`);
  });
});

describe('findOnPath', () => {
  it('finds the first runnable program in PATH order, as a spawn would', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'coachgate-path-'));
    try {
      const directories = ['empty', 'not-runnable', 'first', 'second'].map((name) =>
        path.join(root, name),
      );
      for (const directory of directories) mkdirSync(directory);
      writeFileSync(path.join(root, 'not-runnable', 'tool'), '#!/bin/sh\n', { mode: 0o644 });
      for (const name of ['first', 'second'])
        writeFileSync(path.join(root, name, 'tool'), '#!/bin/sh\n', { mode: 0o755 });
      const PATH = directories.join(path.delimiter);
      expect(await findOnPath('tool', { PATH })).toBe(path.join(root, 'first', 'tool'));
      expect(await findOnPath('missing', { PATH })).toBeUndefined();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
