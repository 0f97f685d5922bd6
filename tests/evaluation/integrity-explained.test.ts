import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dataOf, textOf } from '../helpers/mcp.js';
import {
  BROKEN_CALC,
  GOOD_CALC,
  hasPytest,
  pythonTask,
  type PythonTask,
} from '../helpers/python-task.js';

/**
 * check_test_integrity after an approval attempt: each static finding about base tests says what the
 * trusted run (base tests and config on the Player's code) made of it, as the approval guard weighs it.
 */
let project: PythonTask | undefined;
afterEach(async () => {
  await project?.close();
  project?.repo.remove();
  project = undefined;
});

const MOVED_TEST = 'from calc import add\n\n\ndef test_addition():\n    assert add(2, 3) == 5\n';

async function integrity() {
  const result = await project!.call('check_test_integrity', {});
  return { data: dataOf(result), text: textOf(result) };
}

describe.skipIf(!hasPytest)('check_test_integrity with the trusted runs (pytest installed)', () => {
  it('a moved base test that still passes is explained away (info), and the approval goes through', async () => {
    project = await pythonTask({ 'calc.py': GOOD_CALC, 'tests/test_arith.py': MOVED_TEST });
    rmSync(path.join(project.repo.dir, 'tests/test_calc.py'));
    const before = await integrity();
    expect(before.data.trusted_evaluation).toBeNull();
    expect(before.data.findings).toContainEqual(
      expect.objectContaining({ kind: 'test_file_deleted', severity: 'must_fix' }),
    );
    expect(before.data.findings[0].trusted_run).toBeUndefined();

    const { result, text } = await project.approve();
    expect(result.isError, text).toBeFalsy();
    const after = await integrity();
    expect(after.data.trusted_evaluation).toMatchObject({ regressions: [] });
    expect(after.data.must_fix).toBe(0);
    expect(after.data.findings).toContainEqual(
      expect.objectContaining({
        kind: 'test_file_deleted',
        file: 'tests/test_calc.py',
        severity: 'info',
        trusted_run: expect.objectContaining({ outcome: 'explained' }),
      }),
    );
    expect(after.text).toMatch(/Judged with the trusted runs of .*info test_file_deleted/s);
  });

  it('a deleted base test whose base version now fails is confirmed (must_fix, naming the test)', async () => {
    project = await pythonTask({
      'calc.py': BROKEN_CALC,
      'tests/test_calc.py': 'from calc import add\n',
    });
    const { result, text } = await project.approve();
    expect(result.isError).toBe(true);
    expect(text).toMatch(/test_deleted in tests\/test_calc\.py .*the trusted run confirms it/);
    const after = await integrity();
    expect(after.data.trusted_evaluation.regressions).toEqual([
      'tests/test_calc.py::test_add (failed)',
    ]);
    expect(after.data.findings).toContainEqual(
      expect.objectContaining({
        kind: 'test_deleted',
        test: 'test_add',
        severity: 'must_fix',
        trusted_run: {
          outcome: 'confirmed',
          detail: 'the trusted run confirms it: tests/test_calc.py::test_add failed',
        },
      }),
    );
    // Once the code changes, the stored evaluation no longer describes the tree: static findings only.
    project.repo.write('calc.py', GOOD_CALC);
    expect((await integrity()).data.trusted_evaluation).toBeNull();
  });
});
