import { describe, expect, it } from 'vitest';
import { fallbackSignature } from './fallback-signature.server';

describe('the fallback message signature (late.fallback.sig)', () => {
  it('matches the test vector the server checks against', () => {
    expect(fallbackSignature('123456:TEST', '00000000-0000-4000-8000-000000000000', '-1001234567890', 42)).toBe(
      'PsepT8zG4_Pkyiff_X5IXjl2q9VoYla1dh7WVoEGzPY',
    );
  });

  it('changes with the token, the request id, the chat and the message', () => {
    const sig = fallbackSignature('123456:TEST', '00000000-0000-4000-8000-000000000000', '-1001234567890', 42);
    expect(fallbackSignature('123456:OTHER', '00000000-0000-4000-8000-000000000000', '-1001234567890', 42)).not.toBe(sig);
    expect(fallbackSignature('123456:TEST', '00000000-0000-4000-8000-000000000001', '-1001234567890', 42)).not.toBe(sig);
    expect(fallbackSignature('123456:TEST', '00000000-0000-4000-8000-000000000000', '-1001234567891', 42)).not.toBe(sig);
    expect(fallbackSignature('123456:TEST', '00000000-0000-4000-8000-000000000000', '-1001234567890', 43)).not.toBe(sig);
    expect(sig).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});
