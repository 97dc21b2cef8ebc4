// An unexpected console.error fails the test that caused it (Epic Stack's rule): errors are asserted, not ignored.
const original = console.error;
beforeEach(() => {
  console.error = (...args: unknown[]) => {
    original(...args);
    throw new Error(`console.error was called: ${args.map(String).join(' ')}`);
  };
});
afterEach(() => {
  console.error = original;
});
