import { closeSync, constants, fstatSync, openSync } from 'node:fs';
import { open } from 'node:fs/promises';

/** Largest worktree file read as text (task files, evidence, records, test sources). */
export const MAX_TEXT_FILE_BYTES = 16 * 1024 * 1024;

/** Why a path was not read: it names a FIFO, device, socket or directory, or is over the size limit. */
export class UnreadableFileError extends Error {
  constructor(
    readonly file: string,
    readonly code: 'ENOTREG' | 'EFBIG',
    detail: string,
  ) {
    super(`${file} ${detail}`);
    this.name = 'UnreadableFileError';
  }
}

/**
 * Reads a regular file as UTF-8, up to `maxBytes`. Paths come from the Player's reports, so they may name a
 * FIFO (a plain read would wait forever and hold a thread-pool slot) or a huge file (read whole, it would
 * cost its size in memory): both are refused. O_NONBLOCK makes opening a FIFO return at once.
 */
export async function readRegularFile(
  file: string,
  maxBytes = MAX_TEXT_FILE_BYTES,
): Promise<string> {
  const handle = await open(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new UnreadableFileError(file, 'ENOTREG', 'is not a regular file');
    if (info.size > maxBytes)
      throw new UnreadableFileError(
        file,
        'EFBIG',
        `is ${info.size} bytes, over the ${maxBytes}-byte limit`,
      );
    // The size may change between stat and read; never read past the limit.
    const buffer = Buffer.alloc(Math.min(info.size, maxBytes) + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > maxBytes)
      throw new UnreadableFileError(file, 'EFBIG', `is over the ${maxBytes}-byte limit`);
    return buffer.toString('utf8', 0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * `read` of a descriptor of `file` and its size, when it is a regular file (undefined otherwise);
 * closed after. Opened without blocking and checked before any read, synchronously, for loops over
 * a tree's files: a FIFO put in a file's place must not hold the event loop.
 */
export async function withRegularFile<T>(
  file: string,
  read: (descriptor: number, size: number) => T | Promise<T>,
): Promise<T | undefined> {
  const descriptor = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const info = fstatSync(descriptor);
    return info.isFile() ? await read(descriptor, info.size) : undefined;
  } finally {
    closeSync(descriptor);
  }
}
