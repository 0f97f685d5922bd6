import { afterEach, describe, expect, it } from 'vitest';
import { GOOD_CALC, hasPytest, pythonTask, type PythonTask } from '../helpers/python-task.js';

/**
 * Evidence that proves nothing, through the MCP client in a real pytest repo: a completion promise whose
 * files merely exist, and a snippet that only matches a comment.
 */
let project: PythonTask | undefined;
afterEach(async () => {
  await project?.close();
  project?.repo.remove();
  project = undefined;
});

const NOT_VERIFIED = /criterion AC-001 is not verified/;

describe.skipIf(!hasPytest)('evidence tactics (pytest installed)', () => {
  it('refuses a criterion "verified" only by a completion promise whose files exist', async () => {
    project = await pythonTask(
      { 'calc.py': GOOD_CALC },
      {},
      {
        completion_promises: [
          {
            criterion_id: 'AC-001',
            status: 'complete',
            test_file: 'tests/test_divide.py',
            implementation_files: ['calc.py'],
          },
        ],
      },
    );
    const { result, text } = await project.approve({ evidence: [] });
    expect(result.isError).toBe(true);
    expect(text).toMatch(NOT_VERIFIED);
  });

  it('refuses a snippet that matches only a comment', async () => {
    project = await pythonTask({ 'calc.py': `${GOOD_CALC}# AC-001 done: divide rejects zero\n` });
    const { run, result, text } = await project.approve({
      evidence: [{ criterion: 'AC-001', file: 'calc.py', snippet: 'divide rejects zero' }],
    });
    expect(run.status).toBe('passed');
    expect(result.isError).toBe(true);
    expect(text).toMatch(NOT_VERIFIED);
    expect(text).toMatch(/comment/);
  });
});
