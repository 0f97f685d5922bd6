import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'vitest';
import type { TempRepo } from '../helpers/git-repo.js';
import { approvedThenRefused, linesOf } from '../helpers/layout-task.js';
import { JEST_VERSION, installedPackage } from '../helpers/runners.js';

/**
 * Code under test reached through module aliases, through the MCP client with real vitest and
 * jest: a test importing `@/lib/price` or `~/lib/price` reaches app/lib/price, which no manifest
 * declares (app/ is no conventional source root), so only the alias makes it the Player's code.
 * The honest change is approved; "break price, weaken the base test to match" is refused.
 */
const PRICE_TS = linesOf(
  'export function price(cents: number): string {',
  '  return `$${(cents / 100).toFixed(2)}`;',
  '}',
);
const DISCOUNT_TS = linesOf(
  '',
  'export function discount(cents: number, percent: number): number {',
  '  return Math.round(cents * (1 - percent / 100));',
  '}',
);
const vitestTest = (from: string, expected: string) =>
  linesOf(
    "import { expect, test } from 'vitest';",
    `import { price } from '${from}';`,
    '',
    `test('formats cents', () => expect(price(1250)).toBe('${expected}'));`,
  );
const vitestDiscountTest = (from: string) =>
  linesOf(
    "import { expect, test } from 'vitest';",
    `import { discount } from '${from}';`,
    '',
    "test('discounts', () => expect(discount(1000, 15)).toBe(850));",
  );

/** The worktree borrows this repository's node_modules (vitest and jest are devDependencies). */
const linkNodeModules = (prefix: string) => (repo: TempRepo) =>
  symlinkSync(path.join(prefix, 'node_modules'), path.join(repo.dir, 'node_modules'));

const VITEST_LAYOUTS: { name: string; from: string; config: Record<string, string> }[] = [
  {
    name: 'tsconfig paths (in an extended tsconfig) read by vite resolve.tsconfigPaths',
    from: '@/lib/price',
    config: {
      'tsconfig.base.json': linesOf(
        '{',
        '  // shared by every tsconfig',
        '  "compilerOptions": { "baseUrl": ".", "paths": { "@/*": ["app/*"] } }',
        '}',
      ),
      'tsconfig.json':
        '{ "extends": "./tsconfig.base.json", "compilerOptions": { "strict": true } }\n',
      'vitest.config.js': 'export default { resolve: { tsconfigPaths: true } };\n',
    },
  },
  {
    name: 'a vitest resolve.alias built from the config directory',
    from: '~/lib/price',
    config: {
      'vitest.config.js': linesOf(
        "import { fileURLToPath } from 'node:url';",
        '',
        "const app = fileURLToPath(new URL('./app', import.meta.url));",
        "export default { resolve: { alias: { '~': app } } };",
      ),
    },
  },
];

const TAKEN = {
  taken_from_player: ['app/lib/price.ts'],
  taken_because: [{ file: 'app/lib/price.ts', reason: 'imported by test/price.test.ts' }],
};
const CRITERION = 'discount(cents, percent) takes the percentage off';

describe('code under test through vitest aliases (real vitest)', () => {
  it.each(VITEST_LAYOUTS)(
    '$name: the honest fix is approved, a broken base behaviour is refused',
    async (layout) => {
      await approvedThenRefused({
        base: {
          'package.json': JSON.stringify({ type: 'module', scripts: { test: 'vitest run' } }),
          '.gitignore': 'node_modules/\n',
          ...layout.config,
          'app/lib/price.ts': PRICE_TS,
          'test/price.test.ts': vitestTest(layout.from, '$12.50'),
        },
        honest: {
          'app/lib/price.ts': PRICE_TS + DISCOUNT_TS,
          'test/discount.test.ts': vitestDiscountTest(layout.from),
        },
        tactic: {
          'app/lib/price.ts': PRICE_TS.replace('toFixed(2)', 'toFixed(1)') + DISCOUNT_TS,
          'test/price.test.ts': vitestTest(layout.from, '$12.5'),
        },
        criterion: CRITERION,
        evidence: [{ criterion: 'AC-001', test: 'discounts' }],
        taken: TAKEN,
        refusal: /base test .*formats cents passed at the base but failed in the trusted run/,
        beforePin: linkNodeModules(path.resolve('.')),
      });
    },
    240_000,
  );
});

const PRICE_JS = linesOf(
  'function price(cents) {',
  '  return `$${(cents / 100).toFixed(2)}`;',
  '}',
  '',
  'function discount(cents, percent) {',
  '  return Math.round(cents * (1 - percent / 100));',
  '}',
);
const jestTest = (title: string, name: string, body: string) =>
  `const { ${name} } = require('@/lib/price');\n\ntest('${title}', () => {\n  ${body}\n});\n`;

describe('code under test through jest moduleNameMapper (real jest)', () => {
  it('package.json "jest" maps @/ to app/: approved, then refused', async () => {
    const exportsOf = (names: string) => `\nmodule.exports = { ${names} };\n`;
    const moduleNameMapper = { '^@/(.*)$': '<rootDir>/app/$1' };
    await approvedThenRefused({
      base: {
        'package.json': JSON.stringify({ scripts: { test: 'jest' }, jest: { moduleNameMapper } }),
        '.gitignore': 'node_modules/\n',
        'app/lib/price.js': PRICE_JS.split('\nfunction discount')[0] + exportsOf('price'),
        'test/price.test.js': jestTest(
          'formats cents',
          'price',
          "expect(price(1250)).toBe('$12.50');",
        ),
      },
      honest: {
        'app/lib/price.js': PRICE_JS + exportsOf('price, discount'),
        'test/discount.test.js': jestTest(
          'discounts',
          'discount',
          'expect(discount(1000, 15)).toBe(850);',
        ),
      },
      tactic: {
        'app/lib/price.js':
          PRICE_JS.replace('toFixed(2)', 'toFixed(1)') + exportsOf('price, discount'),
        'test/price.test.js': jestTest(
          'formats cents',
          'price',
          "expect(price(1250)).toBe('$12.5');",
        ),
      },
      criterion: CRITERION,
      evidence: [{ criterion: 'AC-001', test: 'discounts' }],
      taken: {
        taken_from_player: ['app/lib/price.js'],
        taken_because: [{ file: 'app/lib/price.js', reason: 'imported by test/price.test.js' }],
      },
      refusal: /base test .*formats cents passed at the base but failed in the trusted run/,
      beforePin: linkNodeModules(installedPackage('jest', JEST_VERSION)),
    });
  }, 240_000);
});
