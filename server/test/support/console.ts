/**
 * What `run` prints (each console.log and console.error call a line), beside its result. The console is given back
 * whatever happens: one process runs many test files (jest-light-runner), so a console left replaced would hide every
 * later file's errors. ESLint refuses `jest.spyOn(console, …)` anywhere else.
 */
export async function captureConsole<T>(run: () => Promise<T>): Promise<{ result: T; log: string[]; error: string[] }> {
  const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  const error = jest.spyOn(console, 'error').mockImplementation(() => undefined);
  const lines = (spy: jest.SpyInstance) => spy.mock.calls.map((args: unknown[]) => args.map(String).join(' '));
  try {
    const result = await run();
    return { result, log: lines(log), error: lines(error) };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}
