import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { CLI as cli } from './helpers/cli.js';
import { makeRepo } from './helpers/git-repo.js';

const bin = mkdtempSync(path.join(os.tmpdir(), 'coachgate-doctor-'));
afterAll(() => rmSync(bin, { recursive: true, force: true }));

it.skipIf(process.platform === 'win32')(
  'coachgate doctor shows the PATH the server sees and what it finds there',
  () => {
    for (const [name, version] of [
      ['pnpm', '9.9.9'],
      ['corepack', '0.34.0'],
    ]) {
      writeFileSync(path.join(bin, name!), `#!/bin/sh\necho ${version}\n`);
      chmodSync(path.join(bin, name!), 0o755);
    }
    // A GUI host's short PATH: only our directory plus the system basics.
    const output = execFileSync(process.execPath, [cli, 'doctor'], {
      env: { PATH: `${bin}${path.delimiter}/usr/bin${path.delimiter}/bin` },
      encoding: 'utf8',
    });
    expect(output).toContain(`node      ${process.version} at ${process.execPath}`);
    expect(output).toContain(`  ${bin}\n`);
    expect(output).toMatch(
      new RegExp(`pnpm +${bin.replace(/[/\\\\.]/g, '\\$&')}/pnpm +\\(9\\.9\\.9\\)`),
    );
    expect(output).toMatch(/Not found on this PATH: .*yarn/);
    // yarn is missing, corepack is there: a project that declares yarn runs through it.
    expect(output).toMatch(/corepack +\S+\/corepack +\(0\.34\.0\)/);
    expect(output).toMatch(
      /pnpm\/yarn: a project that declares them in packageManager runs through corepack/,
    );
    expect(output).toMatch(/"env": \{"PATH"/);
  },
);

it('coachgate doctor in a repository whose config is invalid says so, not "not in a repository"', () => {
  const repo = makeRepo({ '.guardkit/config.yaml': 'coachgate:\n  max_strikes: zero\n' });
  try {
    const output = execFileSync(process.execPath, [cli, 'doctor'], {
      cwd: repo.dir,
      encoding: 'utf8',
    });
    expect(output).toMatch(
      /the repository's base config could not be read: .*coachgate\.max_strikes/,
    );
    expect(output).not.toMatch(/not in a repository/);
  } finally {
    repo.remove();
  }
});
