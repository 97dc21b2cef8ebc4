import { ApiError } from './api-error';

describe('ApiError', () => {
  it('is built without a stack trace, and leaves the limit for every other error as it was', () => {
    const before = Error.stackTraceLimit;
    const refusal = new ApiError(422, { error: 'invalid', errors: {} });
    expect(refusal.stack).toBe('Error: 422 invalid');
    expect(Error.stackTraceLimit).toBe(before);
    expect(new Error('a fault').stack).toMatch(/\n\s+at /);
  });
});
