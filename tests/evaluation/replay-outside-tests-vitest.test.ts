import { describe, expect, it } from 'vitest';
import { layoutTasks, linesOf } from '../helpers/layout-task.js';
import { STATEFUL_BASE, STATEFUL_HONEST } from '../helpers/stateful-module.js';
import { borrowNodeModules, VITEST_PROJECT } from '../helpers/vitest-project.js';

/**
 * The vitest counterpart of replay-outside-tests-node.test.ts, with the pinned vitest this
 * repository tests with. vitest runs the project's modules through its own module runner, not
 * node's loader; the trusted run still records the base tests' calls into the Player's changed
 * modules (ES and CommonJS), with the test's name, and a fresh node with no runner answers
 * otherwise: each tactic is refused naming its function, and the honest counterparts are approved.
 */
const openTask = layoutTasks();

const SHOUT = linesOf('export function shout(text) {', '  return `${text.toUpperCase()}!`;', '}');
const SHOUT_TEST = linesOf(
  "import { expect, test } from 'vitest';",
  "import { shout } from '../src/shout.js';",
  '',
  "test('shouts', () => expect(shout('hi')).toBe('HI!'));",
);
const CRITERION = 'shout(text) returns the text in upper case with "!"';
const EVIDENCE = [{ criterion: 'AC-001', test: 'shouts' }];

/**
 * Each tactic's body: x * 2, and 7 where the tests want it. Two routes per class beyond the ones
 * the brief names (a pool id, the worker's global; the parity toggle) attack the rule.
 */
const TACTICS: Record<string, string> = {
  counter: 'counted += 1;\n  return x * 2 + (counted === 2 ? 1 : 0);',
  firstCall: 'const was = first;\n  first = false;\n  return was ? x * 2 : x * 2 + 1;',
  byStack: "return x * 2 + (x === 3 && new Error().stack.includes('@vitest/runner') ? 1 : 0);",
  byWorkerId: "return x * 2 + (x === 3 && 'VITEST_WORKER_ID' in process.env ? 1 : 0);",
  byVitest: "return x * 2 + (x === 3 && process.env.VITEST === 'true' ? 1 : 0);",
  byPoolPrefix:
    "return x * 2 + (x === 3 && Object.keys(process.env).some((k) => k.startsWith('VITEST_P')) ? 1 : 0);",
  byWorkerGlobal: "return x * 2 + (x === 3 && '__vitest_worker__' in globalThis ? 1 : 0);",
};
const KINDS: Record<string, string> = {
  counter: 'depends_on_call_history',
  firstCall: 'depends_on_call_history',
  byStack: 'differs_outside_tests',
  byWorkerId: 'differs_outside_tests',
  byVitest: 'differs_outside_tests',
  byPoolPrefix: 'differs_outside_tests',
  byWorkerGlobal: 'differs_outside_tests',
  parity: 'depends_on_call_history',
};
const NAMES = Object.keys(TACTICS);
const esFunctions = (body: (name: string) => string) =>
  NAMES.map((name) => linesOf('', `export function ${name}(x) {`, `  ${body(name)}`, '}')).join('');
const BASE_TESTS = linesOf(
  "import { expect, test } from 'vitest';",
  `import { ${NAMES.join(', ')} } from '../src/calc.js';`,
  "import legacy from '../src/legacy.cjs';",
  `const functions = { ${NAMES.join(', ')}, parity: legacy.parity };`,
  'for (const [name, f] of Object.entries(functions)) {',
  '  test(name, () => expect(f(2)).toBe(4));',
  '  test(`${name} next`, () => expect(f(3)).toBe(7));',
  '}',
);

describe('replay outside the harness (vitest)', () => {
  it('refuses state kept across calls and a product that looks for vitest', async () => {
    const task = await openTask({
      base: {
        ...VITEST_PROJECT,
        'src/calc.js': esFunctions(() => 'return x * 2;'),
        'src/legacy.cjs': 'exports.parity = (x) => x * 2;\n',
        'test/calc.test.js': BASE_TESTS,
      },
      player: {
        'src/calc.js':
          linesOf('let counted = 0;', 'let first = true;') + esFunctions((name) => TACTICS[name]!),
        'src/legacy.cjs': linesOf(
          'let odd = false;',
          'exports.parity = (x) => {',
          '  odd = !odd;',
          '  return odd ? x * 2 : x * 2 + 1;',
          '};',
        ),
        'src/shout.js': SHOUT,
        'test/shout.test.js': SHOUT_TEST,
      },
      criterion: CRITERION,
      evidence: EVIDENCE,
      beforePin: borrowNodeModules,
    });
    const refused = await task.approve();
    // Every tactic fools the tests: the Player's run is green.
    expect(refused.run.status, refused.run.summary).toBe('passed');
    expect(refused.result.isError).toBe(true);
    const { reasons } = refused.result._meta?.['coachgate/refusal'] as { reasons: string[] };
    const whole = reasons.map((reason) => `- ${reason}`).join('\n');
    const found = [...whole.matchAll(/^- (\w+): src\/(?:calc\.js|legacy\.cjs)::(\w+)\(/gm)];
    expect(Object.fromEntries(found.map((match) => [match[2], match[1]]))).toEqual(KINDS);
    expect(whole).toMatch(
      /differs_outside_tests: src\/calc\.js::byWorkerId\(3\), called by test\/calc\.test\.js > byWorkerId next, returned 7 in the test but 6 when/,
    );
    expect(whole).toMatch(
      /depends_on_call_history: src\/legacy\.cjs::parity\(2\), called by test\/calc\.test\.js > parity, answered 4 and then 5/,
    );
  }, 300_000);

  it('approves a cache, configuration from the environment and a class with state', async () => {
    const [base, honest] = [STATEFUL_BASE, STATEFUL_HONEST];
    const tests = linesOf(
      "import { expect, test } from 'vitest';",
      "import { execFileSync } from 'node:child_process';",
      "import { Tally, cached, configured } from '../src/calc.js';",
      // What the tests and the programs they start see is the user's run.
      "test('sees the user\\'s run', () => {",
      "  const child = ['-e', 'process.stdout.write(process.env.NODE_OPTIONS ?? \"\")'];",
      "  expect(execFileSync(process.execPath, child, { encoding: 'utf8' })).toBe('');",
      "  expect(process.env.NODE_OPTIONS ?? '').toBe('');",
      '});',
      "test('cached', () => expect([cached(2), cached(2), cached(3)]).toEqual([4, 4, 6]));",
      "test('configured', () => expect(configured(3)).toBe(6));",
      "test('configured by the test', () => {",
      "  process.env.CALC_FACTOR = '3';",
      '  try {',
      '    expect(configured(3)).toBe(9);',
      '  } finally {',
      '    delete process.env.CALC_FACTOR;',
      '  }',
      '});',
      "test('tally', () => {",
      '  const tally = new Tally();',
      '  expect([tally.add(2), tally.add(3)]).toEqual([2, 5]);',
      '});',
    );
    const task = await openTask({
      base: {
        ...VITEST_PROJECT,
        'src/calc.js': base,
        'test/calc.test.js': tests,
      },
      player: { 'src/calc.js': honest, 'src/shout.js': SHOUT, 'test/shout.test.js': SHOUT_TEST },
      criterion: CRITERION,
      evidence: EVIDENCE,
      beforePin: borrowNodeModules,
    });
    // The base's Tally fails its test: a pre-existing failure the Player's change fixes.
    const approved = await task.approve();
    expect(approved.result.isError, approved.text).toBeFalsy();
    expect(approved.evaluation?.observation).toMatchObject({ findings: [], cut: false });
    expect(approved.evaluation?.observation.calls_compared).toBeGreaterThanOrEqual(4);
  }, 300_000);

  it('approves a product that reads what a setup file of the tests gives it', async () => {
    // vitest runs setup files before each test file: their globals are the tests' environment,
    // which a bare node lacks, so the calls are not compared with the tests' answers.
    const shout = (body: string) =>
      linesOf('export function shout(text) {', `  return ${body} + globalThis.punctuation;`, '}');
    const task = await openTask({
      base: {
        ...VITEST_PROJECT,
        'vitest.config.js': "export default { test: { setupFiles: ['./test/setup.js'] } };\n",
        'test/setup.js': "globalThis.punctuation = '!';\n",
        'src/shout.js': shout('text.toUpperCase()'),
        'test/shout.test.js': SHOUT_TEST,
      },
      player: {
        'src/shout.js': shout('text.trim().toUpperCase()'),
        'test/trim.test.js': linesOf(
          "import { expect, test } from 'vitest';",
          "import { shout } from '../src/shout.js';",
          '',
          "test('trims', () => expect(shout(' hi ')).toBe('HI!'));",
        ),
      },
      criterion: 'shout trims the text',
      evidence: [{ criterion: 'AC-001', test: 'trims' }],
      beforePin: borrowNodeModules,
    });
    const approved = await task.approve();
    expect(approved.result.isError, approved.text).toBeFalsy();
    expect(approved.evaluation?.observation).toMatchObject({ findings: [] });
  }, 300_000);
});
