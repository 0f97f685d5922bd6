import { createHash } from 'node:crypto';
import { lstat, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';

/**
 * The base's test files, test data and test config in a snapshot, read before a run of the Player's
 * code: after it, the ones the run changed or removed. The base's tests are the judge, so product
 * code that writes into them (a golden file rewritten, an expected value edited) is named.
 */
export async function watchFiles(
  dir: string,
  files: readonly string[],
): Promise<() => Promise<string[]>> {
  const before = await digests(dir, files);
  return async () => {
    const after = await digests(dir, files);
    return files.filter((file) => before.get(file) !== after.get(file));
  };
}

async function digests(dir: string, files: readonly string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  await Promise.all(
    files.map(async (file) => {
      const digest = await digestOf(path.join(dir, file));
      if (digest !== undefined) found.set(file, digest);
    }),
  );
  return found;
}

async function digestOf(file: string): Promise<string | undefined> {
  const info = await lstat(file).catch(() => undefined);
  if (!info) return undefined;
  const content = info.isSymbolicLink()
    ? Buffer.from(`link:${await readlink(file)}`)
    : info.isFile()
      ? await readFile(file).catch(() => undefined)
      : undefined;
  return content && createHash('sha256').update(content).digest('hex');
}
