import { lstatSync, readdirSync, type Dirent, type Stats } from 'node:fs';

/**
 * Synchronous metadata reads for walks over a tree the Player may be changing: a path removed
 * meanwhile answers undefined, or no entries, instead of failing the walk.
 */
export function lstatIfPresent(file: string): Stats | undefined {
  try {
    return lstatSync(file);
  } catch {
    return undefined;
  }
}

export function entriesIfPresent(directory: string): Dirent[] {
  try {
    return readdirSync(directory, { withFileTypes: true });
  } catch {
    return [];
  }
}
