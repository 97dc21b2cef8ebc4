// Lint for every workspace: typescript-eslint with type information (floating and misused promises, unused code).
// `npm run lint` runs it with Prettier's check; `npm test` runs `npm run lint` first, so CI fails on a lint error.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '**/build/**', '.cache/**', 'data/**', 'landing/public/**', 'landing/.react-router/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // Plain JavaScript (scripts, e2e, bench, drills, the landing's server): no type information, same unused-code rules.
    files: ['**/*.mjs', '**/*.js', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: { ...globals.node },
    },
  },
  {
    // CommonJS files load their dependencies with require(), which is what CommonJS is.
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Migrations are frozen and typed against any schema (Kysely's own convention for migrations).
    files: ['server/src/database/migrations/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // A server source file (the inbox page's too) does one job: past 400 lines it is split by responsibility (tests and migrations aside).
    files: ['server/src/**/*.ts', 'server/inbox-page/**/*.ts'],
    ignores: ['**/*.test.ts', 'server/src/database/migrations/*.ts'],
    rules: { 'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }] },
  },
  {
    // Browser-side callbacks of the e2e tests run in the page.
    files: ['e2e/**/*.mjs'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
  {
    // Tests read JSON answers and sandbox state loosely; what they assert is checked by the assertion itself.
    files: ['**/*.test.ts', '**/test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // One process runs many server test files (jest-light-runner): a console replaced by one stays replaced for the
    // rest, hiding their errors. Tests capture it through captureConsole (server/test/support/console.ts), which gives
    // it back.
    files: ['server/**/*.test.ts', 'server/test/**/*.ts'],
    ignores: ['server/test/support/console.ts', 'server/test/setup.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name=/^(spyOn|replaceProperty)$/][arguments.0.name='console']",
          message: 'Capture the console with captureConsole (server/test/support/console.ts): it gives it back.',
        },
        {
          selector: "AssignmentExpression[left.object.name='console']",
          message: 'Capture the console with captureConsole (server/test/support/console.ts): it gives it back.',
        },
      ],
    },
  },
  // The house (docs/architecture.md, "Layers") is checked by dependency-cruiser (.dependency-cruiser.cjs), the last
  // step of `npm run lint`.
);
