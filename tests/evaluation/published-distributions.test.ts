import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GOOD_CALC, hasPytest, pythonTaskPerTest } from '../helpers/python-task.js';

/**
 * A virtualenv's distributions verified against the wheels their index publishes (issue 57 item
 * 6): `python -m venv .venv && pip install pytest`, the most common Python set-up, as pip installs
 * it from the index it is configured with, through the MCP client.
 */
const project = pythonTaskPerTest();

/** The venv with pytest installed by pip, or undefined where pip cannot install it (no index). */
function venvWithPytest(dir: string): string | undefined {
  try {
    execFileSync('python3', ['-m', 'venv', '.venv'], { cwd: dir, stdio: 'ignore' });
    execFileSync('.venv/bin/python', ['-m', 'pip', 'install', '-q', 'pytest'], {
      cwd: dir,
      stdio: 'ignore',
      timeout: 180_000,
    });
  } catch {
    return undefined;
  }
  const lib = path.join(dir, '.venv/lib');
  return path.join(lib, readdirSync(lib)[0]!, 'site-packages');
}

/** Edits a file of pytest and rewrites its RECORD line to match, as a Player hiding the edit would. */
function editWithRecord(site: string, file: string): () => void {
  const [record] = readdirSync(site).filter((name) => /^pytest-[\d.]+\.dist-info$/.test(name));
  const recordFile = path.join(site, record!, 'RECORD');
  const [original, originalRecord] = [path.join(site, file), recordFile].map((item) =>
    readFileSync(item),
  );
  const edited = `${original!.toString('utf8')}\n# edited\n`;
  writeFileSync(path.join(site, file), edited);
  const digest = createHash('sha256').update(edited).digest('base64url');
  const rewritten = originalRecord!
    .toString('utf8')
    .replace(
      new RegExp(`^${file.replace(/[./]/g, '\\$&')},.*$`, 'm'),
      `${file},sha256=${digest},${Buffer.byteLength(edited)}`,
    );
  expect(rewritten).not.toBe(originalRecord!.toString('utf8'));
  writeFileSync(recordFile, rewritten);
  return () => {
    writeFileSync(path.join(site, file), original!);
    writeFileSync(recordFile, originalRecord!);
  };
}

describe.skipIf(!hasPytest)('a virtualenv verified against the wheels its index publishes', () => {
  it('refuses pytest edited before the pin with its RECORD rewritten, naming the file; approves it restored', async (context) => {
    let restore: (() => void) | undefined;
    const task = await project.start(
      { 'calc.py': GOOD_CALC },
      { '.gitignore': '.venv/\n' },
      {},
      (repo) => {
        const site = venvWithPytest(repo.dir);
        if (site) restore = editWithRecord(site, '_pytest/python_api.py');
      },
    );
    if (!restore) return context.skip('pip could not install pytest into a fresh venv (no index)');

    const refused = await task.approve();
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(
      /planted environment: \.venv\/lib\/python3\.\d+\/site-packages\/_pytest\/python_api\.py — an installed file of pytest [\d.]+ differs from its published wheel/,
    );

    restore();
    const approved = await task.approve();
    expect(approved.result.isError, approved.text).toBeFalsy();
  }, 300_000);
});
