import { describe, expect, it } from 'vitest';
import { chainCommands, insertAfter } from '../../src/runner/chain.js';
import { runnerInChain } from '../../src/runner/detect.js';

const FLAGS = ['--reporter=default', "'--outputFile.junit=/tmp/a b/x.xml'"];

/** The line with FLAGS inserted after its runner's command, or undefined when none gets them. */
function rewritten(line: string): string | undefined {
  const step = runnerInChain(line);
  return step && insertAfter(line, step, FLAGS);
}

describe('a runner inside a chain gets its arguments after its own command', () => {
  it.each([
    [
      'pnpm lint && vitest run --coverage && echo done',
      `pnpm lint && vitest run --coverage ${FLAGS.join(' ')} && echo done`,
    ],
    ['jest && npm run check:type:ts', `jest ${FLAGS.join(' ')} && npm run check:type:ts`],
    [
      'eslint . && vitest run && tsc --noEmit',
      `eslint . && vitest run ${FLAGS.join(' ')} && tsc --noEmit`,
    ],
    ['eslint .; jest --ci ; tsc', `eslint .; jest --ci ${FLAGS.join(' ')} ; tsc`],
    ['vitest run || true', `vitest run ${FLAGS.join(' ')} || true`],
    // Quotes are kept as written, and operators inside them are not the chain's.
    [
      `vitest run -t "adds && doubles" 'a;b' && echo "x || y"`,
      `vitest run -t "adds && doubles" 'a;b' ${FLAGS.join(' ')} && echo "x || y"`,
    ],
    [
      'cross-env CI=1 npx vitest run --dir src &&\ntsc',
      `cross-env CI=1 npx vitest run --dir src ${FLAGS.join(' ')} &&\ntsc`,
    ],
    // A pipe or redirection in another command is that command's business.
    [
      'eslint . | tee lint.log && jest && tsc > tsc.log',
      `eslint . | tee lint.log && jest ${FLAGS.join(' ')} && tsc > tsc.log`,
    ],
  ])('%s', (line, expected) => {
    expect(rewritten(line)).toBe(expected);
  });

  it.each([
    ['a runner behind a pipe', 'eslint . && vitest run | tee out.log && tsc'],
    ['a redirected runner', 'eslint . && jest 2> jest.log && tsc'],
    ['a runner in the background', 'jest & tsc'],
    ['two runners, whose reports would compete', 'jest && vitest run && tsc'],
    ['a subshell', '(cd packages/a && vitest run) && tsc'],
    ['a command substitution', 'eslint $(git ls-files) && vitest run && tsc'],
    ['a substitution inside double quotes', 'echo "$(date)" && vitest run && tsc'],
    ['backquotes', 'eslint `ls` && vitest run && tsc'],
    ['a group', '{ eslint .; vitest run; } && tsc'],
    ['a here-document', 'cat <<EOF && vitest run && tsc'],
    ['an unclosed quote', "vitest run -t 'adds && tsc"],
    ['no runner at all', 'eslint . && tsc --noEmit'],
  ])('none for %s', (_why, line) => {
    expect(rewritten(line)).toBeUndefined();
  });

  it('reads each command of the chain with its place in the line', () => {
    const line = "lint && vitest run -t 'a && b'; echo \\&\\& done";
    expect(chainCommands(line)?.map(({ text, simple }) => [text, simple])).toEqual([
      ['lint', true],
      ["vitest run -t 'a && b'", true],
      ['echo \\&\\& done', true],
    ]);
    const [, vitest] = chainCommands(line)!;
    expect(line.slice(vitest!.start, vitest!.end)).toBe("vitest run -t 'a && b'");
  });
});
