import type { LateInfo } from '@stickers/shared';
import { fallbackSignature, FallbackVerifier } from './fallback-verifier';

const TOKEN = '123456:TEST';
const REQUEST = '00000000-0000-4000-8000-000000000000';
const VECTOR = 'PsepT8zG4_Pkyiff_X5IXjl2q9VoYla1dh7WVoEGzPY';
const claim = (sig?: string) => ({ chat_id: '-1001234567890', message_id: 42, sent_at: 1, ...(sig === undefined ? {} : { sig }) });
const late = (sig?: string): LateInfo => ({ submitted_at: 0, route: 'fallback', reason: '503', fallback: claim(sig), skewMs: 0 });
const verifier = (token: string | null = TOKEN) => new FallbackVerifier({ telegram: { token } });

describe('fallback claims must be signed (late.fallback.sig)', () => {
  it('the signature of the documented test vector', () => {
    expect(fallbackSignature(TOKEN, REQUEST, '-1001234567890', 42)).toBe(VECTOR);
  });

  it('verifies exactly the claim signed with this bot token for this request, chat and message', () => {
    expect(verifier().verified(REQUEST, claim(VECTOR))).toBe(true);
    expect(verifier('123456:OTHER').verified(REQUEST, claim(VECTOR))).toBe(false);
    expect(verifier().verified('00000000-0000-4000-8000-000000000001', claim(VECTOR))).toBe(false);
    expect(verifier().verified(REQUEST, { ...claim(VECTOR), chat_id: '-1001234567891' })).toBe(false);
    expect(verifier().verified(REQUEST, { ...claim(VECTOR), message_id: 43 })).toBe(false);
    expect(verifier().verified(REQUEST, claim(VECTOR.slice(0, -1)))).toBe(false);
    expect(verifier().verified(REQUEST, claim())).toBe(false);
    expect(verifier(null).verified(REQUEST, claim(VECTOR))).toBe(false);
  });

  it('screen: a signed claim goes to the decision as it came; any other is dropped, with the trace note saying why', () => {
    expect(verifier().screen(REQUEST, late(VECTOR))).toEqual({ late: late(VECTOR), ignored: null });
    expect(verifier().screen(REQUEST, null)).toEqual({ late: null, ignored: null });
    const lost: LateInfo = { ...late(), fallback: null };
    expect(verifier().screen(REQUEST, lost)).toEqual({ late: lost, ignored: null });

    const forged = verifier().screen(REQUEST, late('AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'));
    expect(forged.late).toEqual({ ...late(), fallback: null });
    expect(forged.ignored).toBe(
      'the claimed fallback message (chat -1001234567890, message 42) is ignored: its signature does not check ' +
        '(another bot token, or a forged claim); the card goes out as a new message',
    );
    expect(verifier().screen(REQUEST, late()).ignored).toContain('is ignored: it is not signed;');
    expect(verifier(null).screen(REQUEST, late(VECTOR)).ignored).toContain('this server has no bot token to check its signature with');
  });
});
