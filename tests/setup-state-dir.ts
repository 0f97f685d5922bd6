import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { initKey } from '../src/records/keys.js';

// Every test file gets its own state directory (inherited by spawned CLI processes): tests never touch
// the real ~/.local/state/coachgate.
process.env.COACHGATE_STATE_DIR = mkdtempSync(path.join(os.tmpdir(), 'coachgate-state-'));
// As `coachgate serve` does at start: the key exists before any run (signing never creates one).
await initKey();
