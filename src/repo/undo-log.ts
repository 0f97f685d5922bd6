/**
 * What a command of several steps changed so far, so that a failure part-way leaves every file as it
 * was: each step records, before it writes, how to put things back; a failure undoes them newest first.
 */
import { readdir, readFile, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

export class UndoLog {
  private readonly steps: (() => Promise<void>)[] = [];

  /** Call before writing `file`: its content now, or its absence and the directories to be made. */
  async beforeWrite(file: string): Promise<void> {
    const before = await readFile(file).catch(() => undefined);
    const made = await missingDirectories(path.dirname(file));
    this.steps.push(async () => {
      // Absent before: nothing to remove where a file on the way is no directory (ENOTDIR).
      if (before === undefined)
        await rm(file, { force: true }).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'ENOTDIR') throw error;
        });
      else await writeFile(file, before);
      for (const directory of made) await rmdir(directory).catch(() => undefined);
    });
  }

  /** Call before copying the tree `source` onto `target`: each file it will write there. */
  async beforeCopy(source: string, target: string): Promise<void> {
    const entries = await readdir(source, { recursive: true, withFileTypes: true });
    for (const entry of entries.filter((item) => item.isFile()))
      await this.beforeWrite(
        path.join(target, path.relative(source, entry.parentPath), entry.name),
      );
  }

  /** A step undone by other means (a commit, a merge, a registration). */
  add(undo: () => Promise<void>): void {
    this.steps.push(undo);
  }

  /** Undoes every step, newest first; returns the failures (each step is tried whatever the others do). */
  async undo(): Promise<string[]> {
    const failures: string[] = [];
    for (const step of this.steps.splice(0).reverse())
      await step().catch((error: Error) => failures.push(error.message));
    return failures;
  }
}

/** The directories from `directory` up to the first that exists, deepest first. */
async function missingDirectories(directory: string): Promise<string[]> {
  const missing: string[] = [];
  let current = directory;
  while (!(await stat(current).catch(() => undefined))) {
    missing.push(current);
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
  return missing;
}
