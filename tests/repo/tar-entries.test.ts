import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tarFileDigests } from '../../src/repo/tar-entries.js';

/** Archives written by GNU tar in each format a registry's tarball may use, read back by digest. */
let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const digest = (text: string | Buffer) => createHash('sha256').update(text).digest('base64url');

describe('tarFileDigests', () => {
  it.each(['ustar', 'pax', 'gnu'])(
    'lists every regular file of a %s archive, long names included, links and directories left out',
    (format) => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-tar-'));
      // 130 characters: past ustar's 100-byte name, within its 155-byte prefix.
      const deep = `package/${'nested-directory/'.repeat(7)}file.js`;
      const long = `package/${'x'.repeat(120)}.js`; // a name ustar cannot hold in one field
      const files: Record<string, string> = {
        'package/index.js': 'module.exports = 1;\n',
        [deep]: 'deep\n',
        ...(format === 'ustar' ? {} : { [long]: 'long\n' }),
        'package/empty.txt': '',
      };
      for (const [file, text] of Object.entries(files)) {
        mkdirSync(path.dirname(path.join(dir, 'src', file)), { recursive: true });
        writeFileSync(path.join(dir, 'src', file), text);
      }
      symlinkSync('index.js', path.join(dir, 'src/package/link.js'));
      const archive = path.join(dir, 'a.tar');
      execFileSync('tar', [`--format=${format}`, '-cf', archive, '-C', path.join(dir, 'src'), '.']);

      const listed = tarFileDigests(readFileSync(archive));
      expect(Object.fromEntries(listed)).toEqual(
        Object.fromEntries(
          Object.entries(files).map(([file, text]) => [`./${file}`, digest(text)]),
        ),
      );
    },
  );
});
