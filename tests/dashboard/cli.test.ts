import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI } from '../helpers/dashboard-repo.js';

const ui = (...args: string[]) =>
  spawnSync(process.execPath, [CLI, 'ui', ...args], { encoding: 'utf8', timeout: 30_000 });

describe('coachgate ui: caller mistakes exit 2 before anything listens', () => {
  it('refuses a port out of range, a directory that is not a repository and extra arguments', () => {
    const port = ui('--port', '99999');
    expect([port.status, port.stdout]).toEqual([2, '']);
    expect(port.stderr).toContain('--port must be a number from 0 to 65535, not 99999');
    const notRepo = ui('--root', mkdtempSync(path.join(os.tmpdir(), 'coachgate-plain-')));
    expect(notRepo.status).toBe(2);
    expect(notRepo.stderr).toMatch(/is not a git repository/);
    expect(ui('extra').stderr).toContain('unexpected argument "extra"');
  });
});
