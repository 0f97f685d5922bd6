import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OutputCapture } from '../../src/runner/output-capture.js';
import { runSandboxed } from '../../src/sandbox/run.js';
import { bwrapUsable } from '../helpers/bubblewrap.js';

const directories: string[] = [];
afterEach(() =>
  directories.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })),
);

/** Processes on this machine whose command line holds `marker`. */
function processesWith(marker: string): string[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
      } catch {
        return false; // gone meanwhile
      }
    });
}

/**
 * The processes with `marker` after up to `ms`: bubblewrap reports the exit as soon as the
 * namespace's init passes the status on, and the kernel kills the namespace as that init exits a
 * moment later (under load, once in a CI run, that moment was still open when the run returned).
 */
async function leftAfter(marker: string, ms: number): Promise<string[]> {
  const until = Date.now() + ms;
  while (processesWith(marker).length > 0 && Date.now() < until)
    await new Promise((resolve) => setTimeout(resolve, 20));
  return processesWith(marker);
}

describe.skipIf(!bwrapUsable)("a sandboxed run's own PID namespace (needs a usable bwrap)", () => {
  it('leaves nothing running when the run returns: a daemon that cleared its environment is killed with it', async () => {
    // The server does not search the machine after a sandboxed run: the kernel's kill of the
    // namespace is what this checks. The daemon would sleep a minute; it may take a moment.
    const project = mkdtempSync(path.join(os.tmpdir(), 'coachgate-daemon-'));
    directories.push(project);
    const marker = `coachgate-daemon-${process.pid}-${Date.now()}`;
    const daemon = `open('started', 'w').close(); import time; time.sleep(60)`;
    const script = [
      `(setsid env -i python3 -c "${daemon}" ${marker} &)`,
      'while [ ! -e started ]; do sleep 0.05; done',
    ].join('; ');
    const capture = await OutputCapture.open(path.join(project, 'run.log'));
    const outcome = await runSandboxed(
      {
        argv: ['sh', '-c', script],
        cwd: project,
        env: { PATH: process.env.PATH ?? '', HOME: os.homedir() },
        timeoutMs: 30_000,
        isolation: { policy: { mode: 'required', network: 'none' }, writable: [project] },
      },
      capture,
    );
    await capture.close();
    expect(outcome).toMatchObject({ exit_code: 0, sandbox: { backend: 'bubblewrap' } });
    expect(existsSync(path.join(project, 'started'))).toBe(true);
    expect(await leftAfter(marker, 1_000)).toEqual([]);
  });
});
