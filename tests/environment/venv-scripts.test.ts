import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { plantedEnvironment } from '../../src/evaluation/planted-environment.js';

/** A real virtualenv with pip, as `python3 -m venv` makes it (skipped where venv is missing). */
const dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-venv-scripts-'));
const hasVenv = (() => {
  try {
    execFileSync('python3', ['-m', 'venv', path.join(dir, '.venv')], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!hasVenv)(
  `a virtualenv's console scripts, by their RECORD${hasVenv ? '' : ' — skipped: python3 -m venv unavailable'}`,
  () => {
    it('accepts the scripts pip installed, and names one edited in place', async () => {
      expect(await plantedEnvironment(dir)).toEqual([]);
      // A runner started by name (`pip`, `pytest`) that is not the one installed.
      appendFileSync(path.join(dir, '.venv/bin/pip3'), '\n# planted\n');
      expect(await plantedEnvironment(dir)).toEqual([
        {
          file: '.venv/bin/pip3',
          problem: expect.stringMatching(/^an installed file of pip no longer matches the sha256/),
        },
      ]);
    });
  },
);
