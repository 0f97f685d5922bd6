import { mkdir, readdir, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { childRun } from '../repo/child-output.js';
import { sandboxedCommand } from '../sandbox/run.js';

/**
 * Bytecode for the trusted runs of a project with its own virtualenv, compiled by coachgate. The
 * baseline of such a project executes the virtualenv, which the Player can write, so nothing that
 * run wrote is kept: its cache only names the modules it imported. coachgate compiles each of
 * those sources again into checked-hash bytecode (PEP 552): Python takes such a file only while
 * the source's content hashes to what it records, whatever the source's time and size, so a
 * module changed since (a virtualenv file, a file laid from the Player) is compiled afresh.
 *
 * The compiler is the interpreter the virtualenv links to, the one every trusted run executes
 * (src/evaluation/planted-environment.ts holds it to the pinned base's), started by its real path
 * with -I -S (no virtualenv, site hook or PYTHON* variable), in the sandbox a run gets: it reads
 * only what a run could read, and it compiles what it reads, never executes it.
 */

/** Names a run's Python wrote under the prefix: `<stem>.<cache tag>.pyc`, not optimized or rewritten. */
const PLAIN_PYC = /^(?<stem>[^.]+)\.[a-z]+-\d+\.pyc$/;
/** Bounds on what a forged listing can make the compiler read. */
const MAX_SOURCES = 20_000;
const MAX_SOURCE_BYTES = 4 * 1024 * 1024;
const COMPILE_TIMEOUT_MS = 120_000;

const SCRIPT = `
import base64, importlib.util, json, marshal, os, stat, sys
sources, limit = json.load(sys.stdin)
out = []
for source in sources:
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
                continue
            with os.fdopen(fd, "rb", closefd=False) as f:
                data = f.read()
        finally:
            os.close(fd)
        code = compile(data, source, "exec", dont_inherit=True)
    except (OSError, SyntaxError, ValueError):
        continue
    pyc = importlib.util.MAGIC_NUMBER + (3).to_bytes(4, "little")
    pyc += importlib.util.source_hash(data) + marshal.dumps(code)
    out.append([source, base64.b64encode(pyc).decode()])
json.dump([sys.implementation.cache_tag, out], sys.stdout)
`;

/**
 * The sources a run's bytecode under `prefix` stands for (PYTHONPYCACHEPREFIX keeps the source's
 * absolute directory under the prefix, with no __pycache__).
 */
export async function sourcesNamedIn(prefix: string): Promise<string[]> {
  const entries = await readdir(prefix, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile())
    .flatMap((entry) => {
      const stem = PLAIN_PYC.exec(entry.name)?.groups?.stem;
      const directory = path.relative(prefix, entry.parentPath);
      return stem ? [path.join(path.sep, directory, `${stem}.py`)] : [];
    })
    .slice(0, MAX_SOURCES);
}

/**
 * Compiles `sources` with `python` into checked-hash bytecode under `prefix`, where a run with that
 * prefix reads it; `cwd` is the run's directory (the sandbox shows it). False when nothing could
 * be compiled (no sandbox, no interpreter): the caller then keeps no cache.
 */
export async function compileCheckedBytecode(
  sources: string[],
  prefix: string,
  cwd: string,
  python: string,
): Promise<boolean> {
  if (sources.length === 0) return false;
  const command = await sandboxedCommand(
    [await realpath(python), '-I', '-S', '-c', SCRIPT],
    cwd,
    { PATH: process.env.PATH ?? '', PYTHONIOENCODING: 'utf-8' },
    { policy: { mode: 'required', network: 'none' } },
  ).catch(() => undefined);
  if (command?.sandbox.backend !== 'bubblewrap') return false;
  const [program, ...args] = command.argv;
  const run = await childRun(program!, args, {
    cwd,
    input: JSON.stringify([sources, MAX_SOURCE_BYTES]),
    timeoutMs: COMPILE_TIMEOUT_MS,
    maxBytes: 512 * 1024 * 1024,
    env: command.env,
  });
  if (run.failed) return false;
  const [tag, compiled] = JSON.parse(run.stdout) as [string, [string, string][]];
  for (const [source, pyc] of compiled) {
    const directory = path.join(prefix, path.dirname(source));
    await mkdir(directory, { recursive: true });
    const name = `${path.basename(source, '.py')}.${tag}.pyc`;
    await writeFile(path.join(directory, name), Buffer.from(pyc, 'base64'));
  }
  return compiled.length > 0;
}
