import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { childOutput } from '../repo/child-output.js';
import { GIT_CONFIG_ARGS } from '../repo/git.js';

/**
 * Blobs over this are streamed from git into their file, never held: read in a batch, a 200 MB base
 * file cost the server twice its size (the chunks and their concatenation), 541 MB at its peak.
 */
const STREAMED_BLOB_BYTES = 16 * 1024 * 1024;

/** The server's own git on the object store: no filter, nothing of the repository's runs. */
const GIT = [...GIT_CONFIG_ARGS, 'cat-file'];

/** The ids among `oids` whose blobs are over STREAMED_BLOB_BYTES (one `cat-file --batch-check`). */
export async function largeBlobs(worktree: string, oids: string[]): Promise<Set<string>> {
  if (oids.length === 0) return new Set();
  const { stdout } = await childOutput('git', [...GIT, '--batch-check'], {
    cwd: worktree,
    input: `${oids.join('\n')}\n`,
  });
  const large = new Set<string>();
  for (const line of stdout.toString('latin1').split('\n')) {
    const [oid, , size] = line.split(' ');
    if (oid && Number(size) > STREAMED_BLOB_BYTES) large.add(oid);
  }
  return large;
}

/** Writes blob `oid` into `destination`, a new file (never through a link), as git prints it. */
export async function streamBlob(
  worktree: string,
  oid: string,
  destination: string,
  mode: number,
): Promise<void> {
  const child = spawn('git', [...GIT, 'blob', oid], {
    cwd: worktree,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const exited = new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`git cat-file blob ${oid} exited with ${code}`)),
    );
  });
  exited.catch(() => undefined); // awaited below; a failed write may be the error first
  // A spawn that failed for want of descriptors has no stdout; its 'error' event says why.
  if (child.stdout)
    await pipeline(child.stdout, createWriteStream(destination, { flags: 'wx', mode }));
  await exited;
}
