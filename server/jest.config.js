/** Server tests: small (services with fakes) and medium (the real app on a temp SQLite file, real HTTP). */
module.exports = {
  testEnvironment: 'node',
  rootDir: '.',
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest'] },
  moduleFileExtensions: ['ts', 'js', 'json'],
  testTimeout: 30000,
  // Tests run the workspace sources, so a change in shared/ or the sandbox needs no rebuild to be tested.
  moduleNameMapper: {
    '^@stickers/shared$': '<rootDir>/../shared/src/index.ts',
    '^@stickers/telegram-sandbox$': '<rootDir>/../sandbox/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  setupFilesAfterEnv: ['<rootDir>/test/setup.ts'],
};
