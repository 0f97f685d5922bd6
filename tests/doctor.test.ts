import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { CLI as cli } from './helpers/cli.js';

const bin = mkdtempSync(path.join(os.tmpdir(), 'coachgate-doctor-'));
afterAll(() => rmSync(bin, { recursive: true, force: true }));

it.skipIf(process.platform === 'win32')(
  'coachgate doctor shows the PATH the server sees and what it finds there',
  () => {
    writeFileSync(path.join(bin, 'pnpm'), '#!/bin/sh\necho 9.9.9\n');
    chmodSync(path.join(bin, 'pnpm'), 0o755);
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
    expect(output).toMatch(/"env": \{"PATH"/);
  },
);
