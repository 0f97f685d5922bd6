import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapUsable } from '../helpers/bubblewrap.js';
import { runGate } from '../helpers/gate-cli.js';
import { makeRepo } from '../helpers/git-repo.js';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import { BROKEN_CALC, DIVIDE_TEST, hasPytest, pythonTask, TASK } from '../helpers/python-task.js';
import { initKey, privateKeyPath } from '../../src/records/keys.js';
import { stateRoot } from '../../src/records/state-directory.js';

const token = randomBytes(24).toString('hex');
/** Where docs/sandbox.md tells the HTTP coach to keep it: hidden from every run of every process. */
const tokensFile = path.join(stateRoot(), 'http-tokens.yaml');
const homeSecret = path.join(os.homedir(), `.coachgate-sandbox-secret-${process.pid}`);
const homeSecretValue = randomBytes(16).toString('hex');
/** The argument of the daemon every payload tries to leave behind, to find it on this machine. */
const marker = `997.${process.pid}`;
let coachPort: Server;

/**
 * One hostile payload, run from every place the Player's code executes. Each attempt reports
 * SUCCEEDED or how it was blocked, on one ATTACK-RESULT line of the run's output (pytest runs with -s).
 */
function payload(origin: string): string {
  const targets = {
    key: privateKeyPath(),
    tokens: tokensFile,
    token,
    state: stateRoot(),
    home_secret: homeSecret,
    home_secret_value: homeSecretValue,
    pid: process.pid,
    port: (coachPort.address() as { port: number }).port,
    marker,
  };
  const code = `
import json, os, signal, socket
t = json.loads(${JSON.stringify(JSON.stringify(targets))})
r = {}
def attempt(name, fn):
    try:
        r[name] = 'SUCCEEDED' if fn() else 'failed'
    except BaseException as e:
        r[name] = 'blocked: %s: %s' % (type(e).__name__, str(e)[:100])
def write_state():
    target = os.path.join(t['state'], 'pwned-${origin}')
    with open(target, 'w') as f:
        f.write('x')
    # Written into an empty stand-in (the real directory holds keys/) is no success.
    return os.path.exists(os.path.join(t['state'], 'keys'))
def kill_server():
    os.kill(t['pid'], signal.SIGKILL)
    return True
def connect():
    socket.create_connection(('127.0.0.1', t['port']), timeout=2).close()
    return True
def daemon():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execve('/bin/sleep', ['sleep', t['marker']], {})
        os._exit(0)
    return False
attempt('read_key', lambda: 'PRIVATE KEY' in open(t['key']).read())
attempt('read_tokens', lambda: t['token'] in open(t['tokens']).read())
attempt('write_state', write_state)
attempt('read_home_secret', lambda: t['home_secret_value'] in open(t['home_secret']).read())
attempt('read_environ', lambda: b'COACHGATE' in open('/proc/%d/environ' % t['pid'], 'rb').read())
attempt('signal_server', kill_server)
attempt('connect_coach_port', connect)
attempt('leave_daemon', daemon)
print('ATTACK-RESULT ' + json.dumps({'origin': '${origin}', 'results': r}), flush=True)
`;
  // One line (a .pth runs only lines starting with `import`), with its own globals (site.py execs
  // .pth lines inside a function).
  return `import base64; exec(base64.b64decode(${JSON.stringify(Buffer.from(code).toString('base64'))}), {})`;
}

/** Every ATTACK-RESULT line in the logs under `directory`, by origin. */
function attackResults(directory: string): Map<string, Record<string, string>[]> {
  const found = new Map<string, Record<string, string>[]>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (entry.name.endsWith('.log')) {
        for (const line of readFileSync(file, 'utf8').split('\n')) {
          if (!line.startsWith('ATTACK-RESULT ')) continue;
          const { origin, results } = JSON.parse(line.slice('ATTACK-RESULT '.length));
          found.set(origin, [...(found.get(origin) ?? []), results]);
        }
      }
    }
  };
  walk(directory);
  return found;
}

function daemons(): string[] {
  return execFileSync('ps', ['-eo', 'args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(marker) && !line.includes('ps -eo'));
}

beforeAll(async () => {
  // As `coachgate key init` does: the key exists before any run, so reading it is a real attempt.
  await initKey();
  mkdirSync(path.dirname(tokensFile), { recursive: true });
  writeFileSync(tokensFile, `${token}: coach\n`, { mode: 0o600 });
  writeFileSync(homeSecret, homeSecretValue, { mode: 0o600 });
  // Stands in for the coach's HTTP port on this machine's loopback.
  coachPort = createServer((socket) => socket.end());
  await new Promise<void>((resolve) => coachPort.listen(0, '127.0.0.1', resolve));
});

afterAll(() => {
  rmSync(tokensFile, { force: true });
  rmSync(homeSecret, { force: true });
  coachPort.close();
});

const ATTEMPTS = [
  'read_key',
  'read_tokens',
  'write_state',
  'read_home_secret',
  'read_environ',
  'signal_server',
  'connect_coach_port',
];

describe.skipIf(!bwrapUsable || !hasPytest)(
  'a hostile Player inside bubblewrap (needs usable bubblewrap and pytest)',
  () => {
    it('every path that runs the Player code is sandboxed: each attempt fails, the failing tests are recorded and gate fails', async () => {
      const task = await pythonTask(
        {
          // The implementation module (imported by every run, the trusted ones too), a conftest,
          // a test file, the build the gate runs, and a .pth in the ignored virtualenv.
          'calc.py': `${payload('module')}\n${BROKEN_CALC}`,
          'conftest.py': `${payload('conftest')}\n`,
          'tests/test_divide.py': `${payload('test_file')}\n${DIVIDE_TEST}`,
          'build.py': `${payload('build_gate')}\n`,
        },
        {
          'pyproject.toml':
            '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["."]\naddopts = "-s -p no:cacheprovider"\n',
          '.guardkit/config.yaml': 'toolchain:\n  build: python3 build.py\n',
          'build.py': "print('built')\n",
          '.gitignore': '.venv/\n',
        },
      );
      try {
        execFileSync('python3', ['-m', 'venv', '--system-site-packages', '.venv'], {
          cwd: task.repo.dir,
        });
        const sitePackages = execFileSync(
          path.join(task.repo.dir, '.venv/bin/python'),
          ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'],
          { encoding: 'utf8' },
        ).trim();
        writeFileSync(path.join(sitePackages, 'zz_attack.pth'), `${payload('pth')}\n`);
        expect(existsSync(privateKeyPath())).toBe(true);

        const { run, result } = await task.approve();
        expect(run).toMatchObject({
          status: 'failed',
          sandbox: { backend: 'bubblewrap', network: 'none' },
        });
        expect(run.tests).toContainEqual(
          expect.objectContaining({ id: 'tests/test_calc.py::test_add', status: 'failed' }),
        );
        expect(result.isError).toBe(true);
        const gate = runGate(task.repo.dir, TASK, 'box');
        expect(gate.status).not.toBe(0);
        expect(gate.stdout).toMatch(/COACH GATE: FAILED/);
        // The box says which sandbox the tests ran in.
        expect(gate.stdout).toMatch(/║ +sandbox: bubblewrap, network none/);

        const results = attackResults(path.join(task.repo.dir, '.guardkit/autobuild', TASK));
        expect([...results.keys()].sort()).toEqual([
          'build_gate',
          'conftest',
          'module',
          'pth',
          'test_file',
        ]);
        for (const [origin, runs] of results) {
          for (const attempts of runs) {
            for (const name of ATTEMPTS)
              expect(attempts[name], `${origin}: ${name}`).toMatch(/^(blocked: |failed)/);
          }
        }
        expect(readdirSync(stateRoot()).filter((name) => name.startsWith('pwned'))).toEqual([]);
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(daemons()).toEqual([]);
      } finally {
        await task.close();
        task.repo.remove();
      }
    }, 240_000);

    it("an npm test script's payload is sandboxed too, and its failing test is what is recorded", async () => {
      const repo = makeRepo({
        'package.json': JSON.stringify({
          scripts: { test: `python3 -c ${shellQuote(payload('npm_script'))} && node --test` },
        }),
        'test/fails.test.js':
          "import test from 'node:test';\nimport assert from 'node:assert';\ntest('honest', () => assert.equal(1, 2));\n",
      });
      const { client, close } = await connect({ roots: [repo.dir] });
      try {
        const result = await callTool(client, 'run_independent_tests', {
          worktree: repo.dir,
          task_id: 'TASK-9',
        });
        const run = dataOf(result);
        expect(run).toMatchObject({ status: 'failed', sandbox: { backend: 'bubblewrap' } });
        expect(textOf(result)).toMatch(/^FAILED: .* Sandbox: bubblewrap, network none\./);
        const attempts = attackResults(path.join(repo.dir, '.guardkit/autobuild/TASK-9')).get(
          'npm_script',
        );
        // The candidate run, and the trusted runs started beside it, each ran the script.
        expect(attempts!.length).toBeGreaterThanOrEqual(1);
        for (const attempt of attempts!)
          for (const name of ATTEMPTS) expect(attempt[name], name).toMatch(/^(blocked: |failed)/);
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(daemons()).toEqual([]);
      } finally {
        await close();
        repo.remove();
      }
    }, 120_000);

    it('an honest project whose tests use a service on the host loopback passes with network: loopback, and not with none', async () => {
      const port = (coachPort.address() as { port: number }).port;
      const test = `import socket\n\ndef test_database():\n    socket.create_connection(("127.0.0.1", ${port}), timeout=2).close()\n`;
      const outcomes: Record<string, unknown> = {};
      for (const network of ['loopback', 'none']) {
        const repo = makeRepo({
          '.guardkit/config.yaml': `coachgate:\n  sandbox:\n    network: ${network}\n`,
          'tests/test_db.py': test,
        });
        const { client, close } = await connect({ roots: [repo.dir] });
        try {
          const run = dataOf(
            await callTool(client, 'run_independent_tests', { worktree: repo.dir }),
          );
          outcomes[network] = { status: run.status, network: run.sandbox.network };
        } finally {
          await close();
          repo.remove();
        }
      }
      expect(outcomes).toEqual({
        loopback: { status: 'passed', network: 'loopback' },
        none: { status: 'failed', network: 'none' },
      });
    }, 120_000);
  },
);

describe('without a working sandbox', () => {
  const withoutSandbox = async (body: () => Promise<void>) => {
    const { forgetSandboxDetection } = await import('../../src/sandbox/backend.js');
    const saved = process.env.COACHGATE_BWRAP;
    process.env.COACHGATE_BWRAP = '/nonexistent/bwrap';
    forgetSandboxDetection();
    try {
      await body();
    } finally {
      if (saved === undefined) delete process.env.COACHGATE_BWRAP;
      else process.env.COACHGATE_BWRAP = saved;
      forgetSandboxDetection();
    }
  };

  it.skipIf(process.platform !== 'linux')(
    'sandbox mode required refuses to run anything and says how to install bubblewrap',
    async () => {
      const repo = makeRepo({
        '.guardkit/config.yaml': 'coachgate:\n  sandbox:\n    mode: required\n',
        'tests/test_x.py': 'def test_x():\n    assert True\n',
      });
      const { client, close } = await connect({ roots: [repo.dir] });
      try {
        await withoutSandbox(async () => {
          const result = await callTool(client, 'run_independent_tests', { worktree: repo.dir });
          expect(result.isError).toBe(true);
          expect(textOf(result)).toMatch(/Refusing to run.*requires a sandbox/);
          expect(textOf(result)).toMatch(/apt-get install bubblewrap/);
        });
      } finally {
        await close();
        repo.remove();
      }
    },
  );

  it.skipIf(process.platform !== 'linux' || !hasPytest)(
    'sandbox mode auto runs unsandboxed with a warning in the record, the tool result and the gate box',
    async () => {
      const task = await pythonTask({});
      try {
        await withoutSandbox(async () => {
          const result = await task.call('run_independent_tests', {});
          const run = dataOf(result);
          expect(run.sandbox).toMatchObject({ backend: 'none', mode: 'auto' });
          expect(run.sandbox.warning).toMatch(/^NOT SANDBOXED/);
          expect(run.env.notes[0]).toMatch(/^NOT SANDBOXED/);
          expect(textOf(result)).toMatch(/^NOT SANDBOXED/);
          const gate = runGate(task.repo.dir, TASK, 'box');
          expect(gate.stdout).toMatch(/NOT SANDBOXED/);
        });
      } finally {
        await task.close();
        task.repo.remove();
      }
    },
    120_000,
  );
});

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
