import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import { initKey } from '../src/records/keys.js';

// Every test file gets its own state directory (inherited by spawned CLI processes): tests never touch
// the real ~/.local/state/coachgate.
const stateDirectory = mkdtempSync(path.join(os.tmpdir(), 'coachgate-state-'));
process.env.COACHGATE_STATE_DIR = stateDirectory;
// As `coachgate serve` does at start: the key exists before any run (signing never creates one).
await initKey();
// Removed after the file's own clean-up (after-hooks run last-registered first): a test run
// otherwise leaves one directory in /tmp per test file. A background run the file started (a
// baseline filling the bytecode cache) may still be writing there: then it is left, not a failure.
afterAll(() => {
  try {
    rmSync(stateDirectory, { recursive: true, force: true, maxRetries: 3 });
  } catch {
    // left in /tmp
  }
});
