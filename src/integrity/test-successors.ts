import type { TestCase, TestSuccessor } from './integrity-types.js';
export type { TestSuccessor } from './integrity-types.js';

export interface LocatedTest {
  file: string;
  test: TestCase;
}

/**
 * For each gone base test, the added test that most likely took its place, or undefined: the same last
 * name in a new suite, class or file (moved or wrapped), the same body under a new name (renamed), an
 * added test in its file whose name extends the old one (split: `test_add` → `test_add_small`), or a
 * parametrized test added to its file (converted). Each added test takes one base test, except a
 * parametrized one, which stands for many. Static only: whether the successor passes is the runs' word.
 */
export function matchSuccessors(
  gone: LocatedTest[],
  added: LocatedTest[],
  deletedFiles: ReadonlySet<string>,
): (TestSuccessor | undefined)[] {
  const claimed = new Set<LocatedTest>();
  const result: (TestSuccessor | undefined)[] = gone.map(() => undefined);
  const pass = (
    how: (base: LocatedTest, candidate: LocatedTest) => TestSuccessor['how'] | undefined,
    shared = false,
  ) => {
    gone.forEach((base, index) => {
      if (result[index] !== undefined) return;
      const open = added.filter((candidate) => shared || !claimed.has(candidate));
      // The same file first, so a wrap in place does not pair with a namesake elsewhere.
      const ordered = [
        ...open.filter((candidate) => candidate.file === base.file),
        ...open.filter((candidate) => candidate.file !== base.file),
      ];
      for (const candidate of ordered) {
        const kind = how(base, candidate);
        if (kind === undefined) continue;
        if (!shared) claimed.add(candidate);
        result[index] = {
          test: base.test.name,
          file: candidate.file,
          as: candidate.test.name,
          how: kind,
        };
        return;
      }
    });
  };
  pass((base, candidate) => {
    if (leafName(base) !== leafName(candidate)) return undefined;
    return base.file === candidate.file ? 'wrapped' : 'moved';
  });
  pass((base, candidate) =>
    base.test.body !== undefined && base.test.body === candidate.test.body ? 'renamed' : undefined,
  );
  pass((base, candidate) =>
    candidate.file === base.file && extendsName(leafName(candidate), leafName(base))
      ? 'split'
      : undefined,
  );
  pass(
    (base, candidate) =>
      candidate.test.parametrized && (candidate.file === base.file || deletedFiles.has(base.file))
        ? 'parametrized'
        : undefined,
    true,
  );
  return result;
}

/** `test_add_small` extends `test_add`; `adds negatives` extends `adds`. */
function extendsName(name: string, base: string): boolean {
  return name.length > base.length && name.startsWith(base) && /[_\s-]/.test(name[base.length]!);
}

/** `TestCalc.test_add` → `test_add`; `calc > adds` → `adds`. */
function leafName({ file, test }: LocatedTest): string {
  if (test.name.includes(' > ')) return test.name.split(' > ').at(-1)!;
  return file.endsWith('.py') ? test.name.split('.').at(-1)! : test.name;
}

export type RunOutcome = 'passed' | 'failed' | 'missing';

/**
 * How the successor fared in a run of the Player's tree: passed when every run test that is it passed
 * (all cases of a parametrized one). Run ids name it as `file::Class::name[case]` (pytest),
 * `file > suite > name` or `suite > name` (TAP); a JS title template (`adds %i`, `$a + $b`) matches its
 * expansions.
 */
export function successorOutcome(
  successor: Pick<TestSuccessor, 'file' | 'as'>,
  tests: readonly { id: string; status: string }[],
): RunOutcome {
  const matches = tests.filter((test) => runsAs(test.id, successor.file, successor.as));
  if (matches.length === 0) return 'missing';
  return matches.every((test) => test.status === 'passed') ? 'passed' : 'failed';
}

const PLACEHOLDER = /%[sdifjo#%]|\$\{(?:[^{}]|\{[^{}]*\})*\}|\$[\w.]+/;

function runsAs(id: string, file: string, name: string): boolean {
  const inFile = id.startsWith(file)
    ? id.slice(file.length).replace(/^(?:::| > |\s*›\s*)/, '')
    : id;
  const plain = inFile.replace(/\[[^\]]*\]$/, '').replace(/ \(\d+\)$/, '');
  const dotted = plain.replace(/::/g, '.');
  if (plain === name || dotted === name) return true;
  // A parametrized JS title: `%s`/`%i`/`$name` placeholders and template literals' `${…}` stand
  // for any text.
  if (!PLACEHOLDER.test(name)) return false;
  const pattern = name
    .split(PLACEHOLDER)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${pattern}$`).test(plain);
}
