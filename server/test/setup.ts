// An unexpected console.error fails the test that caused it (Epic Stack's rule): errors are asserted, not ignored.
// Set once per worker, not in hooks: the light runner starts each test file with a fresh describe tree, which holds
// none of a setup file's hooks.
const original = console.error;
console.error = (...args: unknown[]) => {
  original(...args);
  throw new Error(`console.error was called: ${args.map(String).join(' ')}`);
};
