/** Server tests: small (services with fakes) and medium (the real app on a temp SQLite file, or PostgreSQL with LEADS_TEST_DATABASE=postgres, real HTTP). */
module.exports = {
  // Plain Node instead of a vm context per file: each worker loads Nest, Kysely and the app once, not once per file
  // (docs/decisions.md, "Tests"). No per-test timeout there: scripts/test.mjs ends a suite that hangs.
  runner: 'jest-light-runner',
  rootDir: '.',
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  moduleFileExtensions: ['ts', 'js', 'cjs', 'json'],
  setupFiles: ['<rootDir>/test/support/typescript.mjs'],
  setupFilesAfterEnv: ['<rootDir>/test/setup.ts'],
  // Jest itself loads these two: its transform compiles them.
  transform: { '^.+\\.ts$': ['@swc/jest'] },
  // LEADS_TEST_DATABASE=postgres: one throwaway PostgreSQL for the run (test/support/test-database.ts).
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
};
