import { execFileSync } from 'node:child_process';

/** bubblewrap installed and working here (it can exist and still fail without user namespaces). */
export const bwrapUsable = (() => {
  try {
    execFileSync('bwrap', ['--ro-bind', '/', '/', '--unshare-pid', '--unshare-net', 'true'], {
      stdio: 'ignore',
    });
    return true;
  } catch {
    return false;
  }
})();
