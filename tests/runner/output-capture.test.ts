import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runProcess } from '../../src/runner/execute.js';
import { MAX_LINE_CHARS, OutputCapture, READ_CHUNK } from '../../src/runner/output-capture.js';
import { summarizeOutput } from '../../src/runner/summary.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'coachgate-capture-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const printer = path.resolve('scripts/print-output.mjs');
const MEGABYTES = 40;

/** Runs the output printer as a real child process through the runner, as a test suite would be. */
async function capture(shape: string) {
  const logPath = path.join(scratch, `${shape}.log`);
  const output = await OutputCapture.open(logPath);
  const env = { PATH: process.env.PATH ?? '' };
  const outcome = await runProcess(
    {
      argv: [process.execPath, printer, shape, String(MEGABYTES)],
      cwd: scratch,
      env,
      timeoutMs: 60_000,
    },
    output,
  );
  await output.close();
  return { outcome, output, excerpt: output.excerpt(), logSize: statSync(logPath).size };
}

describe('output capture keeps a bounded excerpt of 40 MB in any line shape', () => {
  it.each(['lines', 'one-line', 'no-newline', 'progress'])('%s', async (shape) => {
    const { outcome, output, excerpt, logSize } = await capture(shape);
    expect(outcome).toMatchObject({ exit_code: 1, timed_out: false });
    // Capture finished: every byte reached the log, none is lost or held back.
    expect(output.bytes).toBeGreaterThanOrEqual(MEGABYTES * 1024 * 1024);
    expect(logSize).toBe(output.bytes);
    expect(excerpt).toContain('AssertionError: the first real error');
    expect(excerpt).toContain('AssertionError: a later error');
    // The summary a Player reads leads with it, even when it sat inside a 40 MB line.
    expect(summarizeOutput(excerpt)).toMatch(/^(E {3})?AssertionError: the first real error/);
    expect(excerpt).toMatch(/\[\.\.\. \d+ characters omitted; full output in .*\.log \.\.\.\]/);
    expect(excerpt.length).toBeLessThan(1024 * 1024);
    const longNote = `longer than ${MAX_LINE_CHARS} characters were scanned in pieces`;
    if (shape === 'one-line' || shape === 'no-newline') expect(excerpt).toContain(longNote);
    else expect(excerpt).not.toContain(longNote);
    // No TAP in it, so the run's reader never loads the 40 MB log whole to look for some.
    expect(output.tap.found).toBe(false);
  });
});

describe('output capture scanning', () => {
  it('treats \\r\\n split across two reads of the log as one line ending, decodes a character split the same way, and keeps an error’s neighbours', async () => {
    const output = await OutputCapture.open(path.join(scratch, 'crlf.log'));
    // The server reads the log in READ_CHUNK pieces: '\r' ends one read, its '\n' starts the next.
    const before = `${'noise\n'.repeat(100_000)}collecting\r`;
    const filler = 'p'.repeat(10 * READ_CHUNK - before.length - 1);
    let text = `${filler}\n${before}\nE   AssertionError: boom\r\nnext line\nquiet\n`;
    // 'é' is two bytes: its first byte ends a read, its second starts the next.
    text += 'q\n'.repeat((11 * READ_CHUNK - 1 - Buffer.byteLength(text)) / 2) + 'ééé\n';
    output.write(text);
    await output.close();
    expect(output.bytes).toBe(Buffer.byteLength(text));
    expect(output.excerpt()).toContain(
      '[... error lines from the omitted part ...]\ncollecting\nE   AssertionError: boom\nnext line\nquiet\n',
    );
    expect(output.excerpt()).toMatch(/q\nééé\n$/);
  });

  it('notices TAP from its version line, or its plan with a test point, through colour codes', async () => {
    const seen = async (text: string) => {
      const output = await OutputCapture.open(path.join(scratch, 'tap.log'));
      output.write(text);
      await output.close();
      return output.tap.found;
    };
    const noise = 'building...\nok, done\n';
    expect(await seen(`${noise}\u001b[32mTAP version 14\u001b[39m\n`)).toBe(true);
    expect(await seen(`${noise}ok 1 - adds\r\nnot ok 2 - subtracts\n1..2\n`)).toBe(true);
    // A line that merely starts like a test point is not a TAP document.
    expect(await seen(`${noise}ok 1 file linted\n`)).toBe(false);
    expect(await seen(`${noise}  1..2\n  ok 1 - indented\n`)).toBe(false);
  });
});
