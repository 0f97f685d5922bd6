import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { textOf } from '../helpers/mcp.js';
import { BASE_LIB, GOOD_LIB, nodeTask, type NodeTask } from '../helpers/node-task.js';

/**
 * An honest change that removes a helper and the test file that tested it (commander.js 373f660f6f
 * drops its own `stripColor` for node:util's and deletes `help.stripAnsi.test.js`): the base's copy
 * of that file cannot load against the change, so its tests do not run in the trusted run. The
 * Coach retires the file with a criterion; nothing else that stopped running is covered by that.
 */
const PAD = 'export function pad(text) {\n  return ` ${text} `;\n}\n';
const PAD_TEST = [
  "import test from 'node:test';",
  "import assert from 'node:assert/strict';",
  "import { pad } from '../src/lib.js';",
  '',
  "test('pads both sides', () => assert.equal(pad('a'), ' a '));",
  "test('pads nothing', () => assert.equal(pad(''), '  '));",
  '',
].join('\n');
const DELETED = 'test/pad.test.js';

let project: NodeTask | undefined;
afterEach(async () => {
  await project?.close();
  project?.repo.remove();
  project = undefined;
});

async function approve(retire: string[]) {
  await project!.call('run_independent_tests', {});
  const result = await project!.call('record_verdict', {
    turn: 1,
    decision: 'approve',
    rationale: 'done',
    evidence: [{ criterion: 'AC-001', test: 'shouts' }],
    acknowledged_changes: retire.map((test) => ({
      test,
      criterion: 'AC-001',
      reason: 'pad() is gone: node:util does it now',
    })),
  });
  return { result, text: textOf(result) };
}

describe('a base test file deleted with the code it tests', () => {
  it('is refused until the Coach retires it, then approved', async () => {
    project = await nodeTask({}, { 'src/lib.js': BASE_LIB + PAD, [DELETED]: PAD_TEST });
    rmSync(path.join(project.repo.dir, DELETED));

    const refused = await approve([]);
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(/base test pads both sides passed at the base but did not run/);
    expect(refused.text).toMatch(/unless its test file is one the Player deleted/);

    const approved = await approve([DELETED]);
    expect(approved.result.isError, approved.text).toBeFalsy();
  }, 240_000);

  it('retiring it covers no other test that stopped running, nor a file the Player kept', async () => {
    // greet() removed too: the base's test/lib.test.js no longer loads either.
    const lib = GOOD_LIB.replace(BASE_LIB, '');
    project = await nodeTask(
      { 'src/lib.js': lib },
      { 'src/lib.js': BASE_LIB + PAD, [DELETED]: PAD_TEST },
    );
    rmSync(path.join(project.repo.dir, DELETED));

    const refused = await approve([DELETED, 'test/lib.test.js']);
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(/greets by name/);
    expect(refused.text).not.toMatch(/pads both sides/);
  }, 240_000);
});
