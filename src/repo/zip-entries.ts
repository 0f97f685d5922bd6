import { inflateRawSync } from 'node:zlib';

const END_OF_DIRECTORY = 0x06054b50;
const DIRECTORY_ENTRY = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;

/** One member of a zip archive, as its central directory lists it. */
interface Member {
  name: string;
  method: number;
  compressedSize: number;
  localHeader: number;
}

/** The names of a zip archive's members (a wheel), from its central directory. */
export function zipNames(archive: Buffer): string[] {
  return members(archive).map((member) => member.name);
}

/** One member's content, stored or deflated; undefined when absent or in another method. */
export function zipMember(archive: Buffer, name: string): Buffer | undefined {
  const member = members(archive).find((item) => item.name === name);
  if (!member || archive.readUInt32LE(member.localHeader) !== LOCAL_HEADER) return undefined;
  const start =
    member.localHeader +
    30 +
    archive.readUInt16LE(member.localHeader + 26) +
    archive.readUInt16LE(member.localHeader + 28);
  const data = archive.subarray(start, start + member.compressedSize);
  if (member.method === 0) return data;
  return member.method === 8 ? inflateRawSync(data) : undefined;
}

/** The central directory's entries; none when the archive has no end record (not a zip). */
function members(archive: Buffer): Member[] {
  const end = endRecord(archive);
  if (end === undefined) return [];
  const count = archive.readUInt16LE(end + 10);
  let offset = archive.readUInt32LE(end + 16);
  const found: Member[] = [];
  for (let index = 0; index < count; index++) {
    if (offset + 46 > archive.length || archive.readUInt32LE(offset) !== DIRECTORY_ENTRY) break;
    const nameLength = archive.readUInt16LE(offset + 28);
    found.push({
      name: archive.subarray(offset + 46, offset + 46 + nameLength).toString('utf8'),
      method: archive.readUInt16LE(offset + 10),
      compressedSize: archive.readUInt32LE(offset + 20),
      localHeader: archive.readUInt32LE(offset + 42),
    });
    offset +=
      46 + nameLength + archive.readUInt16LE(offset + 30) + archive.readUInt16LE(offset + 32);
  }
  return found;
}

/** Where the end-of-central-directory record starts: searched back over a comment of ≤ 64 KiB. */
function endRecord(archive: Buffer): number | undefined {
  const lowest = Math.max(0, archive.length - 22 - 0xffff);
  for (let offset = archive.length - 22; offset >= lowest; offset--)
    if (archive.readUInt32LE(offset) === END_OF_DIRECTORY) return offset;
  return undefined;
}
