import { spawn } from 'node:child_process';

/** A program's whole stdout, for the server's own short commands (git cat-file --batch). */
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
