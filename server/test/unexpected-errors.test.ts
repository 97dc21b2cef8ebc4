import { captureConsole } from './support/console';

// The tests' own rule (test/setup.ts): an unexpected console.error throws in the test that caused it, in every file a
// worker runs; a test that expects one captures the console (support/console.ts).
describe('an unexpected console.error', () => {
  it('throws where it was called, failing the test', () => {
    expect(() => console.error('a stray error')).toThrow('console.error was called: a stray error');
  });

  it('is allowed where a test captures the console, and throws again after it', async () => {
    expect(await captureConsole(() => Promise.resolve(console.error('expected here')))).toMatchObject({ error: ['expected here'] });
    expect(() => console.error('a stray error after')).toThrow('console.error was called: a stray error after');
  });
});
