/** Server tests: small (services with fakes) and medium (the real app on a temp SQLite file, or PostgreSQL with LEADS_TEST_DATABASE=postgres, real HTTP). */
module.exports = {
  testEnvironment: 'node',
  rootDir: '.',
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest'] },
  moduleFileExtensions: ['ts', 'js', 'cjs', 'json'],
  // Generous: a test waits for events (harness waitFor, scaled on a loaded machine); this only ends a hung one.
  testTimeout: 60000,
  // Tests run the workspace sources, so a change in shared/ or the sandbox needs no rebuild to be tested.
  moduleNameMapper: {
    '^@stickers/shared$': '<rootDir>/../shared/src/index.ts',
    '^@stickers/telegram-sandbox$': '<rootDir>/../sandbox/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  setupFilesAfterEnv: ['<rootDir>/test/setup.ts'],
  // LEADS_TEST_DATABASE=postgres: one throwaway PostgreSQL for the run (test/support/test-database.ts).
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
};
