import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repositoryStateDirectory } from '../../src/records/state-directory.js';
import { bwrapUsable } from '../helpers/bubblewrap.js';
import * as python from '../helpers/python-task.js';

/**
 * The base's bytecode cache through the MCP client, real pytest and bubblewrap: the baseline fills
 * it, the Player's run and the trusted runs read it, and a Player's code that forges bytecode for
 * the standard library into it changes nothing.
 */
const { BROKEN_CALC, GOOD_CALC } = python;
const tasks = python.pythonTaskPerTest();

/** A base test that fails if `fractions` is anything but the standard library's. */
const FRACTIONS_TEST = `import fractions


def test_fractions_are_the_standard_librarys():
    assert getattr(fractions, "FORGED", None) is None
    assert fractions.Fraction(1, 2) + fractions.Fraction(1, 2) == 1
`;

/**
 * Product code that, on import, writes bytecode for \`fractions\` where this run's Python would read
 * it (the cache, when the run has one), stamped with the real source's time and size so that a
 * later run would take it for the real thing.
 */
const FORGE = `
import importlib.util as _util
import os as _os
from importlib._bootstrap_external import _code_to_timestamp_pyc


def _forge():
    import fractions

    source = fractions.__file__
    target = _util.cache_from_source(source)
    stat = _os.stat(source)
    code = compile("FORGED = 'by the player'\\n", source, "exec")
    try:
        _os.makedirs(_os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as out:
            out.write(_code_to_timestamp_pyc(code, stat.st_mtime, stat.st_size))
    except OSError:
        pass


_forge()
`;

/** Every file of the repository's published bytecode caches. */
async function cachedFiles(worktree: string): Promise<string[]> {
  const root = path.join(await repositoryStateDirectory(worktree), 'bytecode');
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
}

describe.skipIf(!python.hasPytest || !bwrapUsable)(
  'the base’s bytecode cache (needs pytest and a usable bwrap)',
  () => {
    it('is filled by the baseline and read by the next turn’s runs, and forged bytecode never reaches it', async () => {
      const project = await tasks.start(
        { 'calc.py': `${BROKEN_CALC}${FORGE}` },
        { 'tests/test_fractions.py': FRACTIONS_TEST },
      );
      const first = await project.approve();
      expect(first.result.isError, first.text).toBe(true);
      expect(first.text).toContain('test_add');

      // The baseline ran the base's code alone and published what it compiled and rewrote.
      const files = await cachedFiles(project.repo.dir);
      expect(files.some((file) => file.includes('_pytest') && file.endsWith('.pyc'))).toBe(true);
      expect(files.some((file) => file.includes('filling-'))).toBe(false);

      project.repo.write('calc.py', `${GOOD_CALC}${FORGE}`);
      const second = await project.approve();
      expect(second.run.env.notes.join('\n')).toContain("from the server's read-only cache");
      // The trusted runs imported the real `fractions`: the forged bytecode was never written.
      expect(second.result.isError ?? false, second.text).toBe(false);
      const forged = (await cachedFiles(project.repo.dir)).filter((file) =>
        readFileSync(file).includes('by the player'),
      );
      expect(forged).toEqual([]);
    });

    it('runs the Player’s code, never the base’s bytecode, when the Player’s file is the size of the base’s', async () => {
      // The base's divide() checks the wrong divisor; every version below has the base's size.
      const base = GOOD_CALC.replace('b == 0', 'b == 9');
      const project = await tasks.start({ 'calc.py': BROKEN_CALC }, { 'calc.py': base });
      const first = await project.approve();
      expect(first.result.isError, first.text).toBe(true);
      expect(first.text).toMatch(/test_add passed at the base but failed in the trusted run/);
      // The baseline published the bytecode of the base's own files, test modules included.
      const files = await cachedFiles(project.repo.dir);
      expect(files.some((file) => /\/tree\/tests\/test_calc\..*pytest.*\.pyc$/.test(file))).toBe(
        true,
      );

      // Each run of this turn reads the cache: a broken add() still fails the base's test.
      project.repo.write('calc.py', BROKEN_CALC.replace('a - b', 'a * b'));
      const second = await project.approve();
      expect(second.result.isError, second.text).toBe(true);
      expect(second.text).toMatch(
        /test_add passed at the base but failed in the trusted run.*6 == 5/,
      );

      // And the fix the Player's test proves is the one judged.
      project.repo.write('calc.py', GOOD_CALC);
      const third = await project.approve();
      expect(third.run.env.notes.join('\n')).toContain("from the server's read-only cache");
      expect(third.result.isError ?? false, third.text).toBe(false);
    });

    it('refuses product code that forges the bytecode of a later base test module, naming the file; approves the honest fix', async () => {
      // The base's tests of add() sit in a module collected after the one that imports calc first.
      const base = {
        'tests/test_calc.py':
          'from calc import divide\n\n\ndef test_divide():\n    assert divide(6, 3) == 2\n',
        'tests/test_sum.py':
          'from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n',
      };
      // On import: pytest's rewritten bytecode for tests/test_sum.py, stamped with its source's
      // own time and size, where pytest reads it once the prefix the run was given is dropped.
      const forge = [
        'import os, sys',
        'from importlib._bootstrap_external import _code_to_timestamp_pyc',
        '',
        'sys.pycache_prefix = None',
        '_source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tests", "test_sum.py")',
        '_stat = os.stat(_source)',
        '_pyc = os.path.join(os.path.dirname(_source), "__pycache__", "test_sum.cpython-%d%d-pytest-%s.pyc"',
        '    % (sys.version_info[0], sys.version_info[1], __import__("pytest").__version__))',
        'os.makedirs(os.path.dirname(_pyc), exist_ok=True)',
        'with open(_pyc, "wb") as _out:',
        '    _code = compile("def test_add():\\n    pass\\n", _source, "exec")',
        '    _out.write(_code_to_timestamp_pyc(_code, _stat.st_mtime, _stat.st_size))',
        '',
      ].join('\n');
      const project = await tasks.start({ 'calc.py': `${BROKEN_CALC}\n${forge}` }, base);
      const refused = await project.approve();
      expect(refused.result.isError).toBe(true);
      expect(refused.run.tests).toContainEqual(
        expect.objectContaining({
          id: 'coachgate: test harness changed',
          message: expect.stringMatching(
            /^bytecode written during the run was read .*: tests\/__pycache__\/test_sum\.cpython-\d+-pytest-[\d.]+\.pyc\./,
          ),
        }),
      );
      // The forged module is the Player's to clean up before the honest run.
      rmSync(path.join(project.repo.dir, 'tests/__pycache__'), { recursive: true });
      project.repo.write('calc.py', GOOD_CALC);
      const approved = await project.approve();
      expect(approved.result.isError ?? false, approved.text).toBe(false);
    });
  },
);
