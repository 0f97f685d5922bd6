import { describe, expect, it } from 'vitest';
import { layoutTasks } from '../helpers/layout-task.js';
import { hasPytest } from '../helpers/python-task.js';

/**
 * A null turn: the Player changes no product file (here it adds a test the base already passes) and
 * the Coach cites code the base had. Through the MCP client with real pytest, the approval is refused
 * as a null turn, then approved once the Coach states, with the criterion, that the base does it.
 */
const openTask = layoutTasks();

const BASE = {
  'pytest.ini': '[pytest]\npythonpath = .\n',
  'app/__init__.py': '',
  'app/text.py': 'def slug(text):\n    return text.lower().replace(" ", "-")\n',
  'tests/test_text.py':
    'from app.text import slug\n\n\ndef test_slug():\n    assert slug("a b") == "a-b"\n',
};

describe.skipIf(!hasPytest)('a null turn (pytest installed)', () => {
  it('is refused as one, and approved with the acknowledgement that the base does it', async () => {
    const task = await openTask({
      base: BASE,
      player: {
        'tests/test_case.py':
          'from app.text import slug\n\n\ndef test_case():\n    assert slug("A B") == "a-b"\n',
      },
      criterion: 'slug(text) lower-cases the text',
      evidence: [{ criterion: 'AC-001', file: 'app/text.py', line: 2, snippet: 'text.lower()' }],
    });
    const refused = await task.approve();
    expect(refused.run.status).toBe('passed');
    expect(refused.result.isError).toBe(true);
    expect(refused.evaluation).toBeUndefined();
    expect(refused.text).toMatch(
      /null turn: your tree differs from the base in no product file, .* acknowledged_null_turn/,
    );

    const unknown = await task.approve({
      acknowledged_null_turn: { criterion: 'AC-009', reason: 'the base lower-cases' },
    });
    expect(unknown.result.isError).toBe(true);
    expect(unknown.text).toMatch(/criterion "AC-009", which TASK-021 does not have/);

    const approved = await task.approve({
      acknowledged_null_turn: {
        criterion: 'AC-001',
        reason: 'slug() at the base already calls text.lower()',
      },
    });
    expect(approved.result.isError, approved.text).toBeFalsy();
    expect(approved.evaluation).toMatchObject({ null_turn: true, taken_from_player: [] });
  }, 240_000);
});
