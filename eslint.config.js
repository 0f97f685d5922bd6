// typescript-eslint's recommended rules, type-aware, as the MCP TypeScript SDK lints its sources.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'bundle/', 'node_modules/', '.tmp/', 'coverage/', 'examples/', 'schemas/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { project: './tsconfig.lint.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
    },
  },
  {
    // Nothing starts worktree or snapshot code outside the sandbox: only src/sandbox/ may spawn a run.
    files: ['src/**/*.ts'],
    ignores: ['src/sandbox/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/runner/execute.js', './execute.js'],
              importNames: ['runProcess'],
              message: 'Run programs through runSandboxed (src/sandbox/run.ts).',
            },
          ],
        },
      ],
    },
  },
  {
    // Tests read tool results as loose JSON.
    files: ['tests/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Plain scripts are not part of the TypeScript project.
    files: ['**/*.mjs', '**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: globals.node,
    },
  },
  {
    // The dashboard's page script runs in the browser.
    files: ['src/dashboard/page/*.js'],
    languageOptions: { globals: globals.browser },
  },
);
