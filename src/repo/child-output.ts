import { spawn } from 'node:child_process';

/**
 * A program's whole stdout, for the server's own short commands (git cat-file --batch) and for a
 * command the sandbox has already wrapped (the Python ast helper): callers pass what to run.
 */
export interface ChildOutput {
  stdout: Buffer;
  stderr: string;
  exitCode: number | null;
}

/**
 * Runs `program` with `input` on stdin and collects stdout, rejecting when it cannot start or exits
 * non-zero. Every stream and the child have an 'error' listener: execa 9 throws on a spawn that fails
 * with EMFILE and leaves the child's 'error' event unlistened, which ends the server.
 */
export function childOutput(
  program: string,
  args: string[],
  options: { cwd: string; input: string },
): Promise<ChildOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.on('error', reject);
    // A spawn that failed for want of descriptors has no streams; its 'error' event says why.
    if (!child.stdin || !child.stdout || !child.stderr) return;
    child.stdin.on('error', () => undefined); // a child that exits early closes its stdin: EPIPE
    child.stdout.on('error', reject).on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('error', reject).on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('close', (exitCode) => {
      const output = {
        stdout: Buffer.concat(stdout),
        stderr: Buffer.concat(stderr).toString('utf8'),
        exitCode,
      };
      if (exitCode === 0) resolve(output);
      else
        reject(
          new Error(
            `${program} ${args.at(-1)} exited with ${exitCode}: ${output.stderr.trim().slice(-500)}`,
          ),
        );
    });
    child.stdin.end(options.input);
  });
}

/** How a helper program ended: never a rejection, as execa's `reject: false` reported it. */
export interface ChildRun {
  failed: boolean;
  stdout: string;
  stderr: string;
  /** The spawn error's code (ENOENT, EMFILE) when the program could not start. */
  code?: string;
  shortMessage?: string;
}

/**
 * Runs a helper (the AST script) with `input` on stdin, killed past `timeoutMs` or `maxBytes` of
 * output; a spawn failure is a failed run with its code, not an unlistened 'error' event.
 */
export function childRun(
  program: string,
  args: string[],
  options: {
    cwd: string;
    input: string;
    env: Record<string, string>;
    timeoutMs: number;
    maxBytes: number;
  },
): Promise<ChildRun> {
  return new Promise((resolve) => {
    const child = spawn(program, args, { cwd: options.cwd, env: options.env, stdio: 'pipe' });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let size = 0;
    let why: string | undefined;
    const stop = (reason: string) => {
      why ??= reason;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(
      () => stop(`timed out after ${options.timeoutMs} ms`),
      options.timeoutMs,
    );
    const text = (chunks: Buffer[]) => Buffer.concat(chunks).toString('utf8');
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({
        failed: true,
        stdout: '',
        stderr: '',
        code: error.code,
        shortMessage: error.message,
      });
    });
    // A spawn that failed for want of descriptors has no streams; its 'error' event says why.
    if (!child.stdin || !child.stdout || !child.stderr) return;
    child.stdin.on('error', () => undefined); // a child that exits early closes its stdin: EPIPE
    const collect = (chunks: Buffer[]) => (chunk: Buffer) => {
      size += chunk.length;
      if (size > options.maxBytes) stop(`printed over ${options.maxBytes} bytes`);
      else chunks.push(chunk);
    };
    child.stdout.on('error', () => undefined).on('data', collect(stdout));
    child.stderr.on('error', () => undefined).on('data', collect(stderr));
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      const failed = why !== undefined || exitCode !== 0;
      resolve({
        failed,
        stdout: text(stdout),
        stderr: text(stderr),
        ...(failed
          ? { shortMessage: why ?? (signal ? `killed by ${signal}` : `exit ${exitCode}`) }
          : {}),
      });
    });
    child.stdin.end(options.input);
  });
}
