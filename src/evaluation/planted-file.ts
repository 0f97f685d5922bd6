/** A file the planted-environment checks name, with what is wrong with it (its own module: the checks import it, no cycle). */
export interface PlantedFile {
  /** Worktree-relative. */
  file: string;
  problem: string;
}
