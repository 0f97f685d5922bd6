import { describe, expect, it } from 'vitest';
import { layoutTasks, linesOf } from '../helpers/layout-task.js';
import { hasPytest } from '../helpers/python-task.js';

/**
 * pytest11 entry points are start-up points. pytest's plugin autoload imports every `pytest11`
 * entry point of every distribution on sys.path before any test: a distribution's metadata the
 * Player adds in the worktree (an `.egg-info` or `.dist-info` directory at the root, which
 * `python -m pytest` puts on sys.path) starts a plugin in the Player's run that the trusted runs
 * never load; a manifest's `pytest11` declaration registers one at the next (editable) install.
 * Through the MCP client with real pytest, each is refused naming the file; an honest change of the
 * same manifest that leaves its plugins alone is approved.
 */
const openTask = layoutTasks();

const PYPROJECT = linesOf('[project]', 'name = "app"', 'version = "1.0"');
const BASE = {
  'pytest.ini': '[pytest]\npythonpath = .\n',
  'pyproject.toml': PYPROJECT,
  'app/__init__.py': '',
  'app/text.py': linesOf('def shout(text):', '    return text.upper()'),
  'tests/test_text.py': linesOf(
    'from app.text import shout',
    '',
    '',
    'def test_shout():',
    '    assert shout("hi") == "HI"',
  ),
};
const HONEST = {
  'app/text.py': linesOf(
    'def shout(text):',
    '    return text.upper()',
    '',
    '',
    'def whisper(text):',
    '    return text.lower()',
  ),
  'tests/test_whisper.py': linesOf(
    'from app.text import whisper',
    '',
    '',
    'def test_whisper():',
    '    assert whisper("HI") == "hi"',
  ),
};
/** A plugin that leaves out every test of shout(), in whichever run loads it (no pytest import). */
const PLUGIN = linesOf(
  'def pytest_collection_modifyitems(items):',
  '    items[:] = [item for item in items if "shout" not in item.name]',
);
const metadata = (name: string) =>
  linesOf('Metadata-Version: 2.1', `Name: ${name}`, 'Version: 1.0');
const ENTRY_POINTS = linesOf('[pytest11]', 'lenient = app.lenient');

async function approval(player: Record<string, string>) {
  const task = await openTask({
    base: BASE,
    player: { ...HONEST, ...player },
    criterion: 'whisper(text) returns the text in lower case',
    evidence: [{ criterion: 'AC-001', test: 'test_whisper' }],
  });
  return task.approve();
}

describe.skipIf(!hasPytest)('pytest11 entry points (pytest installed)', () => {
  it("refuses an .egg-info's pytest11 entry point added in the worktree, naming it", async () => {
    const refused = await approval({
      'app/lenient.py': PLUGIN,
      'app.egg-info/PKG-INFO': metadata('app'),
      'app.egg-info/entry_points.txt': ENTRY_POINTS,
    });
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(/start-up point changed: app\.egg-info\/entry_points\.txt/);
  }, 240_000);

  it("refuses a .dist-info's pytest11 entry point of another distribution, naming it", async () => {
    const refused = await approval({
      'app/lenient.py': PLUGIN,
      'helper-1.0.dist-info/METADATA': metadata('helper'),
      'helper-1.0.dist-info/entry_points.txt': ENTRY_POINTS,
    });
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(
      /start-up point changed: helper-1\.0\.dist-info\/entry_points\.txt/,
    );
  }, 240_000);

  it('refuses a pytest11 entry point declared in pyproject.toml, approves a version bump', async () => {
    const refused = await approval({
      'app/lenient.py': PLUGIN,
      'pyproject.toml':
        PYPROJECT + linesOf('', '[project.entry-points.pytest11]', 'lenient = "app.lenient"'),
    });
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(/start-up point changed: pyproject\.toml/);
    const approved = await approval({ 'pyproject.toml': PYPROJECT.replace('1.0', '1.1') });
    expect(approved.result.isError, approved.text).toBeFalsy();
  }, 300_000);
});
