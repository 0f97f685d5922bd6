import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';

/**
 * Short read-only commands (git queries) started from a small helper process instead of the server.
 * A spawn forks the process that makes it, and a fork costs in proportion to that process's memory:
 * its page tables are copied and every page it writes afterwards faults once. From a 129 MB server a
 * `git rev-parse` cost 5.4 ms of CPU and 10.9 ms of wall time, from a 416 MB one (a test worker
 * hosting servers) 12.9 ms and 27 ms; through the helper, 0.4 ms of the server's CPU and 4.7-5.5 ms.
 * A turn makes some thirty such queries.
 *
 * The helper is started on the first query (never before `tools/list` is answered), holds no
 * reference that keeps the server alive while idle, and is started again if it dies; a query it
 * cannot take runs as a direct spawn. Neither it nor its queries go through the sandbox: it is the
 * server's own program, and it runs only what the server asks (git, with every setting that could
 * run a program of the repository's overridden: src/repo/git.ts), never worktree or snapshot code.
 */

export interface QueryResult {
  stdout: string;
}

/** As execFile's error: exit `code` (or a spawn error's string code), `stderr`, `stdout`. */
export interface QueryError extends Error {
  code?: number | string;
  stdout?: string;
  stderr?: string;
}

interface Request {
  id: number;
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}
interface Reply {
  id: number;
  stdout: string;
  stderr: string;
  error?: { message: string; code?: number | string };
}

const MAX_BUFFER = 1024 * 1024 * 1024;

/** The helper's whole program: CommonJS for `node -e`, nothing to bundle or resolve. */
const HELPER_SOURCE = `
const { execFile } = require('node:child_process');
process.on('message', ({ id, file, args, cwd, env }) => {
  execFile(file, args, { cwd, env, encoding: 'utf8', maxBuffer: ${MAX_BUFFER} }, (error, stdout, stderr) => {
    const failure = error && { message: error.message, code: error.code };
    process.send({ id, stdout: String(stdout), stderr: String(stderr), error: failure || undefined });
  });
});
process.on('disconnect', () => process.exit(0));
`;

const directExecFile = promisify(execFile);

let helper: ChildProcess | undefined;
let nextId = 0;
const pending = new Map<number, { resolve: (reply: Reply) => void; reject: (e: Error) => void }>();

function startHelper(): ChildProcess {
  // Each query gets the server's whole environment; the helper itself needs none of the variables
  // that make a node start load more (an extra CA bundle alone doubled its start-up, to 110 ms).
  const { NODE_OPTIONS: _options, NODE_EXTRA_CA_CERTS: _bundle, ...env } = process.env;
  const child = spawn(process.execPath, ['-e', HELPER_SOURCE], {
    env,
    // Never the server's stdout: that is the MCP stream.
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    serialization: 'advanced',
  });
  const settleAll = (why: string) => {
    if (helper === child) helper = undefined;
    for (const [id, waiter] of pending) {
      pending.delete(id);
      waiter.reject(new Error(why));
    }
  };
  child.on('message', (reply: Reply) => {
    const waiter = pending.get(reply.id);
    pending.delete(reply.id);
    if (pending.size === 0) child.channel?.unref();
    waiter?.resolve(reply);
  });
  child.on('error', (error) => settleAll(`the query helper failed: ${error.message}`));
  child.on('exit', (code, signal) => settleAll(`the query helper exited (${signal ?? code})`));
  child.unref();
  child.channel?.unref();
  return child;
}

function viaHelper(request: Omit<Request, 'id'>): Promise<Reply> {
  helper ??= startHelper();
  const child = helper;
  const id = nextId++;
  return new Promise<Reply>((resolve, reject) => {
    pending.set(id, { resolve, reject });
    // Held while a reply is awaited: the server's event loop must wait for it.
    child.channel?.ref();
    child.send({ ...request, id }, (error) => {
      if (!error) return;
      pending.delete(id);
      reject(error);
    });
  });
}

/** `file args` in `cwd` with the server's environment, as execFile would run it; rejects as it would. */
export async function queryFile(file: string, args: string[], cwd: string): Promise<QueryResult> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined,
    ),
  );
  let reply: Reply;
  try {
    reply = await viaHelper({ file, args, cwd, env });
  } catch {
    // The helper could not take it (it died, or could not start): the query runs directly.
    const { stdout } = await directExecFile(file, args, {
      cwd,
      encoding: 'utf8',
      maxBuffer: MAX_BUFFER,
    });
    return { stdout };
  }
  if (reply.error) {
    const error: QueryError = new Error(reply.error.message);
    if (reply.error.code !== undefined) error.code = reply.error.code;
    error.stdout = reply.stdout;
    error.stderr = reply.stderr;
    throw error;
  }
  return { stdout: reply.stdout };
}

/** Stops the helper (tests, shutdown): the next query starts a new one. */
export function stopQueryProcess(): void {
  helper?.kill();
  helper = undefined;
}
