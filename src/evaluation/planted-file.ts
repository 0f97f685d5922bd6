/** A file the planted-environment checks name, with what is wrong with it (its own module: the checks import it, no cycle). */
export interface PlantedFile {
  /** Worktree-relative. */
  file: string;
  problem: string;
}

/** How an installed file's problem starts (check_test_integrity reports those apart from hooks). */
export const EDITED_INSTALL = 'an installed file of';
