import type { Exposure, SandboxRequest } from './exposure.js';

/**
 * bubblewrap's argv for one run. Order matters: bwrap applies its mounts in the order given, so
 * private directories come first, then what is put back read-only, then what is writable, then what
 * is protected again, and coachgate's secrets last, so that no earlier bind can uncover them. Only
 * the bytecode cache, which is in the hidden state directory, comes back after them.
 */
export function bubblewrapArgs(
  bwrap: string,
  argv: string[],
  request: SandboxRequest,
  exposure: Exposure,
): string[] {
  const args = [
    bwrap,
    // Its own PID namespace: pid 1 is bwrap's init; when the command exits the kernel kills every
    // process left in the namespace, double-forked daemons included. Dies with the server too.
    '--unshare-pid',
    '--die-with-parent',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    // bubblewrap cannot filter by address: `loopback` shares the host's network like `host`
    // (see docs/sandbox.md); `none` is a private namespace with its own loopback only.
    ...(request.network === 'none' ? ['--unshare-net'] : []),
    // A new session: the run cannot push keystrokes into the server's terminal (TIOCSTI).
    '--new-session',
    // Root starting bwrap keeps its capabilities unless told; without them nothing can be unmounted.
    '--cap-drop',
    'ALL',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
  ];
  for (const directory of exposure.emptied) args.push('--tmpfs', directory);
  for (const entry of exposure.readOnly) args.push('--ro-bind', entry, entry);
  for (const entry of exposure.writable) args.push('--bind', entry, entry);
  for (const entry of exposure.protected) args.push('--ro-bind', entry, entry);
  for (const directory of exposure.hiddenDirectories) args.push('--tmpfs', directory);
  for (const file of exposure.hiddenFiles) args.push('--ro-bind', '/dev/null', file);
  for (const entry of exposure.revealed)
    args.push(entry.writable ? '--bind' : '--ro-bind', entry.path, entry.path);
  args.push('--chdir', request.cwd, '--', ...argv);
  return args;
}
