import { statSync } from 'node:fs';

// A command run as root that deletes and rewrites a file it is told to write (coverage.py's
// `--data-file=/dev/null` did) turns /dev/null into a regular file: every later `> /dev/null` on
// the machine appends to it, and whatever reads it (rustc's stdin in a sandboxed cargo run) gets
// that junk. Checked before the tests, so a machine broken earlier is named, and after them.
const DEV_NULL = '/dev/null';

function check(when: string): void {
  if (process.platform === 'win32') return;
  if (statSync(DEV_NULL).isCharacterDevice()) return;
  throw new Error(
    `${DEV_NULL} is not a device ${when}: a command replaced it with a regular file. ` +
      `Restore it (as root: rm ${DEV_NULL} && mknod -m 666 ${DEV_NULL} c 1 3) and find the ` +
      `test that writes to it as a file.`,
  );
}

export default function setup(): () => void {
  check('before the tests');
  return () => check('after the tests');
}
