import { fileURLToPath } from 'node:url';
import { makeRepo, type TempRepo } from './git-repo.js';
import { GOOD_GREET, GREET_TASK, GREET_TESTS } from './node-project.js';

const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));

/** A linter printing ESLint's JSON format: every `var ` in src/*.js is an error of rule no-var. */
const LINT = `import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
const files = readdirSync('src').filter((name) => name.endsWith('.js')).map((name) => path.resolve('src', name));
const report = files.map((filePath) => ({
  filePath,
  messages: readFileSync(filePath, 'utf8').split('\\n').flatMap((text, index) =>
    text.includes('var ') ? [{ ruleId: 'no-var', severity: 2, message: 'Unexpected var, use let or const instead.', line: index + 1 }] : []),
}));
console.log(JSON.stringify(report));
process.exit(report.some((file) => file.messages.length > 0) ? 1 : 0);
`;

export const TOOLCHAIN_CONFIG = `toolchain:
  build: node build.mjs
  typecheck: node ${JSON.stringify(tsc)} -p tsconfig.json --pretty false
  lint: node lint.mjs
`;

/**
 * The greeting project with build, typecheck and lint configured at the base, where src/legacy.js already
 * has one lint error. The worktree is on autobuild/TASK-042 with a correct greet.js, uncommitted.
 */
export function toolchainProject(): TempRepo {
  const repo = makeRepo({
    'package.json': JSON.stringify({ type: 'module', scripts: { test: 'node --test' } }, null, 2),
    '.guardkit/tasks/backlog/TASK-042.md': GREET_TASK,
    '.guardkit/config.yaml': TOOLCHAIN_CONFIG,
    'lint.mjs': LINT,
    'build.mjs': "await import('./src/greet.js');\nconsole.log('built');\n",
    'tsconfig.json': JSON.stringify({
      // No DOM lib and no @types: tsc checks the project's one file in 0.7 s instead of 2.1 s.
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: 'es2022',
        module: 'nodenext',
        lib: ['es2022'],
        types: [],
      },
      include: ['src/**/*.ts'],
    }),
    'src/legacy.js': 'var legacy = 1;\nexport { legacy };\n',
    'src/greet.js': 'export function greet() {}\n',
    'src/count.ts': 'export const count: number = 1;\n',
  });
  repo.git('checkout', '-q', '-b', 'autobuild/TASK-042');
  repo.write('src/greet.js', GOOD_GREET);
  repo.write('test/greet.test.js', GREET_TESTS);
  return repo;
}
