// The tests' own rule (test/setup.ts): an unexpected console.error throws in the test that caused it, in every file a
// worker runs; a test that expects one replaces console.error itself.
describe('an unexpected console.error', () => {
  it('throws where it was called, failing the test', () => {
    expect(() => console.error('a stray error')).toThrow('console.error was called: a stray error');
  });

  it('is allowed where a test replaces console.error', () => {
    const seen: unknown[][] = [];
    const spy = jest.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void seen.push(args));
    try {
      console.error('expected here');
    } finally {
      spy.mockRestore();
    }
    expect(seen).toEqual([['expected here']]);
  });
});
