import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OutputCapture } from '../../src/runner/output-capture.js';
import { exposureFor, type SandboxRequest } from '../../src/sandbox/exposure.js';
import { runSandboxed } from '../../src/sandbox/run.js';
import { bwrapUsable } from '../helpers/bubblewrap.js';

const scratch: string[] = [];
afterEach(() => scratch.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));
const temporary = (prefix: string) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  scratch.push(dir);
  return dir;
};

function write(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

describe.skipIf(!bwrapUsable)(
  'what a sandboxed run reaches under the emptied /tmp (needs a usable bwrap)',
  () => {
    it('a linked package with its own dependencies and a tool on PATH, both under /tmp, still work', async () => {
      // A package cache under /tmp: `greeter` requires its sibling `shout`, as an install lays them out.
      const cache = temporary('coachgate-cache-');
      write(
        path.join(cache, 'node_modules/shout/index.js'),
        'module.exports = (s) => s.toUpperCase();\n',
      );
      write(
        path.join(cache, 'node_modules/greeter/index.js'),
        "module.exports = (n) => require('shout')(`hello ${n}`);\n",
      );
      const tools = path.join(cache, 'bin');
      write(path.join(tools, 'say-hi'), '#!/bin/sh\necho hi from a tool under /tmp\n');
      chmodSync(path.join(tools, 'say-hi'), 0o755);
      const project = temporary('coachgate-project-');
      mkdirSync(path.join(project, 'node_modules'));
      symlinkSync(
        path.join(cache, 'node_modules/greeter'),
        path.join(project, 'node_modules/greeter'),
      );
      // A file elsewhere under /tmp that nothing links to stays out of sight.
      const other = temporary('coachgate-other-');
      write(path.join(other, 'secret.txt'), 'not for the run\n');

      const log = path.join(temporary('coachgate-log-'), 'run.log');
      const capture = await OutputCapture.open(log);
      const script = [
        `node -e "console.log(require('greeter')('ada'))"`,
        'say-hi',
        `cat ${path.join(other, 'secret.txt')} || echo secret hidden`,
      ].join('; ');
      const outcome = await runSandboxed(
        {
          argv: ['sh', '-c', script],
          cwd: project,
          env: { PATH: `${tools}:${process.env.PATH}`, HOME: os.homedir() },
          timeoutMs: 30_000,
          isolation: { policy: { mode: 'required', network: 'none' } },
        },
        capture,
      );
      await capture.close();
      const output = readFileSync(log, 'utf8');
      expect(outcome.sandbox.backend).toBe('bubblewrap');
      expect(output).toContain('HELLO ADA');
      expect(output).toContain('hi from a tool under /tmp');
      expect(output).toContain('secret hidden');
      expect(output).not.toContain('not for the run');
    });

    it('binds a toolchain once, not again for each of its directories on PATH, and its tools run', async () => {
      // A pyenv under /tmp: $PYENV_ROOT names it, and PATH names its shims and bin inside it.
      const root = path.join(temporary('coachgate-toolchain-'), 'pyenv');
      write(path.join(root, 'shims/say-shim'), '#!/bin/sh\necho hi from a shim\n');
      write(path.join(root, 'bin/say-bin'), '#!/bin/sh\necho hi from bin\n');
      chmodSync(path.join(root, 'shims/say-shim'), 0o755);
      chmodSync(path.join(root, 'bin/say-bin'), 0o755);
      const project = temporary('coachgate-project-');
      const env = {
        PATH: `${root}/shims:${root}/bin:${root}/shims:${process.env.PATH}`,
        HOME: os.homedir(),
        PYENV_ROOT: root,
      };
      const request: SandboxRequest = {
        cwd: project,
        writable: [],
        network: 'none',
        home: 'toolchains',
      };
      const inToolchain = exposureFor(request, env).readOnly.filter((entry) =>
        entry.startsWith(root),
      );
      expect(inToolchain).toEqual([root]);

      const log = path.join(temporary('coachgate-log-'), 'run.log');
      const capture = await OutputCapture.open(log);
      const outcome = await runSandboxed(
        {
          argv: ['sh', '-c', 'say-shim; say-bin'],
          cwd: project,
          env,
          timeoutMs: 30_000,
          isolation: { policy: { mode: 'required', network: 'none' } },
        },
        capture,
      );
      await capture.close();
      expect(outcome.exit_code).toBe(0);
      expect(readFileSync(log, 'utf8')).toContain('hi from a shim\nhi from bin');
    });
  },
);

describe.skipIf(!bwrapUsable)(
  'read-only paths inside a writable cwd (needs a usable bwrap)',
  () => {
    it('refuses writes to a read-only file and directory, and still writes beside them', async () => {
      // As a trusted snapshot's base tests: a file bound alone, and a directory bound whole.
      const snapshot = temporary('coachgate-trusted-');
      write(path.join(snapshot, 'tests/expected.json'), '{"slug": "a-b"}\n');
      write(path.join(snapshot, 'cases/c0.out'), 'case-0\n');
      const log = path.join(temporary('coachgate-log-'), 'run.log');
      const capture = await OutputCapture.open(log);
      const script = [
        'echo x > tests/expected.json || echo expected.json refused',
        'echo x > cases/c0.out || echo c0.out refused',
        'echo x > cases/new.txt || echo new.txt refused',
        'echo x > tests/beside.txt && echo beside written',
      ].join('; ');
      const outcome = await runSandboxed(
        {
          argv: ['sh', '-c', script],
          cwd: snapshot,
          env: { PATH: process.env.PATH ?? '', HOME: os.homedir() },
          timeoutMs: 30_000,
          isolation: {
            policy: { mode: 'required', network: 'none' },
            readOnly: [path.join(snapshot, 'tests/expected.json'), path.join(snapshot, 'cases')],
          },
        },
        capture,
      );
      await capture.close();
      const output = readFileSync(log, 'utf8');
      expect(outcome.sandbox.backend).toBe('bubblewrap');
      expect(output).toMatch(/tests\/expected\.json: Read-only file system/);
      expect(output).toContain('expected.json refused');
      expect(output).toContain('c0.out refused');
      expect(output).toContain('new.txt refused');
      expect(output).toContain('beside written');
      expect(readFileSync(path.join(snapshot, 'tests/expected.json'), 'utf8')).toBe(
        '{"slug": "a-b"}\n',
      );
      expect(readFileSync(path.join(snapshot, 'tests/beside.txt'), 'utf8')).toBe('x\n');
    });
  },
);
