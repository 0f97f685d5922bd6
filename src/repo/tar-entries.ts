import { createHash } from 'node:crypto';

const BLOCK = 512;

/**
 * The regular files of a tar archive (ustar, with pax `path` records and GNU long names, as npm's
 * tarballs are written), each path to its content's sha256 (urlsafe base64, as fileDigest writes
 * it). Directories, links and devices are left out: npm extracts none of them from a tarball.
 */
export function tarFileDigests(archive: Buffer): Map<string, string> {
  const files = new Map<string, string>();
  let offset = 0;
  let longName: string | undefined;
  while (offset + BLOCK <= archive.length) {
    const header = archive.subarray(offset, offset + BLOCK);
    if (header.every((byte) => byte === 0)) break;
    const size = octal(header.subarray(124, 136));
    const type = String.fromCharCode(header[156]!);
    const body = archive.subarray(offset + BLOCK, offset + BLOCK + size);
    offset += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    if (type === 'x') longName = paxPath(body) ?? longName;
    else if (type === 'L') longName = text(body);
    else if (type !== 'g') {
      const name = longName ?? headerName(header);
      longName = undefined;
      if (type === '0' || type === '\0' || type === '7')
        files.set(name, createHash('sha256').update(body).digest('base64url'));
    }
  }
  return files;
}

function headerName(header: Buffer): string {
  const name = text(header.subarray(0, 100));
  const ustar = header.subarray(257, 262).toString('latin1') === 'ustar';
  const prefix = ustar ? text(header.subarray(345, 500)) : '';
  return prefix ? `${prefix}/${name}` : name;
}

/** A size field: octal digits, or base-256 when the top bit is set (files over 8 GiB). */
function octal(field: Buffer): number {
  if (field[0]! & 0x80) return field.subarray(1).reduce((value, byte) => value * 256 + byte, 0);
  return parseInt(text(field).trim() || '0', 8);
}

/** The `path` record of a pax extended header ("<length> path=<value>\n" records). */
function paxPath(body: Buffer): string | undefined {
  let offset = 0;
  while (offset < body.length) {
    const space = body.indexOf(0x20, offset);
    const length = parseInt(body.subarray(offset, space).toString('latin1'), 10);
    if (space === -1 || !(length > 0)) return undefined;
    const record = body.subarray(space + 1, offset + length - 1).toString('utf8');
    if (record.startsWith('path=')) return record.slice('path='.length);
    offset += length;
  }
  return undefined;
}

function text(field: Buffer): string {
  const end = field.indexOf(0);
  return field.subarray(0, end === -1 ? field.length : end).toString('utf8');
}
