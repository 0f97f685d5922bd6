import type { Exposure, SandboxRequest } from './exposure.js';

/**
 * macOS: a Seatbelt profile for `sandbox-exec -p PROFILE`. Written from Apple's SBPL (the profiles in
 * /System/Library/Sandbox/Profiles and the Sandbox Guide): later rules take precedence over earlier
 * ones, so the profile allows by default, then denies, then allows back, then denies the secrets last.
 * Not exercised by the test suite (it runs on Linux); see docs/sandbox.md.
 */
export function seatbeltProfile(request: SandboxRequest, exposure: Exposure): string {
  const subpaths = (paths: string[]) => paths.map((entry) => `(subpath ${quote(entry)})`).join(' ');
  const literals = (paths: string[]) => paths.map((entry) => `(literal ${quote(entry)})`).join(' ');
  const lines = [
    '(version 1)',
    '(allow default)',
    // Writes only where the run may write; the private temporary directory comes through TMPDIR.
    '(deny file-write*)',
    `(allow file-write* ${subpaths([...exposure.writable, ...exposure.emptied])} (literal "/dev/null") (literal "/dev/tty") (regex #"^/dev/fd/"))`,
  ];
  if (request.home === 'toolchains') {
    // The home is default-deny: only the toolchains and caches come back.
    lines.push(`(deny file-read* (subpath ${quote(exposure.home)}))`);
    const back = [...exposure.readOnly, ...exposure.writable];
    if (back.length > 0) lines.push(`(allow file-read* ${subpaths(back)})`);
    // Reading a directory's own entry (stat of $HOME) is needed to walk into the toolchains.
    lines.push(`(allow file-read-metadata (literal ${quote(exposure.home)}))`);
  }
  if (exposure.protected.length > 0)
    lines.push(`(deny file-write* ${subpaths(exposure.protected)})`);
  const hidden = [
    ...(exposure.hiddenDirectories.length ? [subpaths(exposure.hiddenDirectories)] : []),
    ...(exposure.hiddenFiles.length ? [literals(exposure.hiddenFiles)] : []),
  ];
  if (hidden.length > 0) lines.push(`(deny file-read* file-write* ${hidden.join(' ')})`);
  // No PID namespace on macOS: the run may not signal or inspect processes outside its sandbox.
  lines.push('(deny signal (target others))', '(deny process-info* (target others))');
  if (request.network !== 'host') {
    // Seatbelt filters by address where bubblewrap cannot, but has no private loopback: `none` and
    // `loopback` both keep localhost (the tests' own servers), and refuse everything else.
    lines.push(
      '(deny network-outbound (remote ip))',
      '(allow network-outbound (remote ip "localhost:*"))',
      '(deny network-bind (local ip))',
      '(allow network-bind (local ip "localhost:*"))',
    );
  }
  return lines.join('\n');
}

export function seatbeltArgs(
  sandboxExec: string,
  argv: string[],
  request: SandboxRequest,
  exposure: Exposure,
): string[] {
  return [sandboxExec, '-p', seatbeltProfile(request, exposure), ...argv];
}

function quote(text: string): string {
  return JSON.stringify(text);
}
