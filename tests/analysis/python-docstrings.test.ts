import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_SANDBOX_POLICY } from '../../src/config/sandbox-policy.js';
import { pythonDoctestSplices } from '../../src/evaluation/doctest-splice.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import { linesOf } from '../helpers/layout-task.js';

/**
 * The fail-to-pass run's copy of a product file whose docstring examples the Player changed: the
 * base's code with the Player's docstrings, read by the real python3's ast from a real repository.
 */
const DOCTESTS_ON = { 'pytest.ini': '[pytest]\naddopts = --doctest-modules\n' };

const BASE = linesOf(
  'class Box:',
  '    @property',
  '    def size(self):',
  '        """The size."""',
  '        return 1  # é, a multi-byte character before the next docstring',
  '',
  '    def get(self): return "é"',
  '',
  '',
  'def get():',
  '    """The base\'s."""',
  '    return 2',
);

const PLAYER = linesOf(
  '"""The module.',
  '',
  '>>> 1 + 1',
  '2',
  '"""',
  '',
  '',
  'class Box:',
  '    """A box.',
  '',
  '    >>> Box().size',
  '    1',
  '    """',
  '',
  '    @property',
  '    def size(self):',
  '        """The size.',
  '',
  '        >>> Box().size',
  '        1',
  '        """',
  '        return 3',
  '',
  '    def get(self):',
  '        """>>> Box().get()"""',
  '        return "é"',
  '',
  '    def new(self):',
  '        """>>> Box().new()"""',
  '',
  '',
  'def get():',
  '    """The Player\'s.',
  '',
  '    >>> get()',
  '    2',
  '    """',
  '    return 4',
);

const SPLICED = linesOf(
  '"""The module.',
  '',
  '>>> 1 + 1',
  '2',
  '"""',
  'class Box:',
  '    """A box.',
  '',
  '    >>> Box().size',
  '    1',
  '    """',
  '    @property',
  '    def size(self):',
  '        """The size.',
  '',
  '        >>> Box().size',
  '        1',
  '        """',
  '        return 1  # é, a multi-byte character before the next docstring',
  '',
  '    def get(self): return "é"',
  '',
  '',
  'def get():',
  '    """The Player\'s.',
  '',
  '    >>> get()',
  '    2',
  '    """',
  '    return 2',
);

let repo: TempRepo | undefined;
let baseDir: string | undefined;
afterEach(() => {
  repo?.remove();
  if (baseDir) rmSync(baseDir, { recursive: true, force: true });
  repo = baseDir = undefined;
});

/** The splices for app.py, the base committed (and extracted) with `base`, the Player's on top. */
async function splices(base: Record<string, string>, player: string) {
  repo = makeRepo(base);
  baseDir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-base-'));
  for (const [file, text] of Object.entries(base)) writeFileSync(path.join(baseDir, file), text);
  repo.write('app.py', player);
  const commit = repo.git('rev-parse', 'HEAD');
  return pythonDoctestSplices(
    repo.dir,
    { dir: baseDir, commit },
    ['app.py'],
    DEFAULT_SANDBOX_POLICY,
  );
}

describe("the Player's docstrings spliced into the base's code", () => {
  it('replaces, inserts and leaves out docstrings by owner, keeping the base code', async () => {
    const spliced = await splices({ ...DOCTESTS_ON, 'app.py': BASE }, PLAYER);
    expect(spliced.get('app.py')).toBe(SPLICED);
  });

  it('leaves a docstring in parentheses, which is no statement on its own', async () => {
    // Its literal spans the inside of the parentheses: alone in the base, an indentation error.
    const example = `        """The size.\n\n        >>> Box().size\n        1\n        """`;
    const player = BASE.replace(`        """The size."""`, example).replace(
      `    """The base's."""`,
      `    (">>> get()"\n     "\\n2")`,
    );
    const spliced = await splices({ ...DOCTESTS_ON, 'app.py': BASE }, player);
    expect(spliced.get('app.py')).toBe(BASE.replace(`        """The size."""`, example));
  });

  it('splices nothing where the base runs no doctests', async () => {
    expect((await splices({ 'app.py': BASE }, PLAYER)).size).toBe(0);
  });

  it('splices nothing when no docstring with an example changed', async () => {
    const player = BASE.replace('"""The size."""', '"""The size, in bytes."""').replace(
      '1  #',
      '5  #',
    );
    expect((await splices({ ...DOCTESTS_ON, 'app.py': BASE }, player)).size).toBe(0);
  });
});
