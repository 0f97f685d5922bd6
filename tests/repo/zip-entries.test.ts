import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { zipMember, zipNames } from '../../src/repo/zip-entries.js';

/** Archives written by Python's zipfile (as wheels are), stored and deflated, with a comment. */
let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const WRITE = `
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], 'w') as archive:
    archive.writestr('shop-1.0.dist-info/RECORD', 'shop/__init__.py,sha256=x,3\\n' * 50,
                     compress_type=zipfile.ZIP_DEFLATED)
    archive.writestr('shop/__init__.py', 'x=1', compress_type=zipfile.ZIP_STORED)
    archive.comment = b'written by a test'
`;

describe('zip members', () => {
  it('lists the names and reads stored and deflated members; a non-zip has none', () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-zip-'));
    const file = path.join(dir, 'shop-1.0-py3-none-any.whl');
    execFileSync('python3', ['-c', WRITE, file]);
    const archive = readFileSync(file);
    expect(zipNames(archive)).toEqual(['shop-1.0.dist-info/RECORD', 'shop/__init__.py']);
    expect(zipMember(archive, 'shop/__init__.py')?.toString()).toBe('x=1');
    expect(zipMember(archive, 'shop-1.0.dist-info/RECORD')?.toString()).toBe(
      'shop/__init__.py,sha256=x,3\n'.repeat(50),
    );
    expect(zipMember(archive, 'absent')).toBeUndefined();
    expect(zipNames(Buffer.from('not a zip archive at all, longer than an end record'))).toEqual(
      [],
    );
  });
});
