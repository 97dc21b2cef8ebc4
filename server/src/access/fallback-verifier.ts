import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { LateFallbackInfo, LateInfo } from '@stickers/shared';
import { SERVER_CONFIG } from '../config/config.module';

/** A fallback claim's signature (`late.fallback.sig`) as the landing makes it: only the bot token's holder can. */
export function fallbackSignature(botToken: string, requestId: string, chatId: string, messageId: number): string {
  const key = createHash('sha256').update(`stickers-leads fallback\n${botToken}`, 'utf8').digest();
  return createHmac('sha256', key).update(`${requestId}\n${chatId}\n${messageId}`, 'utf8').digest('base64url');
}

/** Fallback claims must be signed: LEADS_SECRET lets a caller store leads, not make the bot edit any message it names. */
@Injectable()
export class FallbackVerifier {
  constructor(@Inject(SERVER_CONFIG) private readonly config: { telegram: { token: string | null } }) {}

  /** Signed with this server's bot token for this request (compared in constant time). */
  verified(requestId: string, fallback: LateFallbackInfo): boolean {
    const token = this.config.telegram.token;
    if (!token || fallback.sig === undefined) return false;
    const expected = Buffer.from(fallbackSignature(token, requestId, fallback.chat_id, fallback.message_id));
    const given = Buffer.from(fallback.sig);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  /** The late request to decide with (its claim dropped unless signed) and the trace's note (no personal data) if dropped. */
  screen(requestId: string, late: LateInfo | null): { late: LateInfo | null; ignored: string | null } {
    const f = late?.fallback;
    if (!late || !f || this.verified(requestId, f)) return { late, ignored: null };
    const why = !this.config.telegram.token
      ? 'this server has no bot token to check its signature with'
      : f.sig === undefined
        ? 'it is not signed'
        : 'its signature does not check (another bot token, or a forged claim)';
    return {
      late: { ...late, fallback: null },
      ignored: `the claimed fallback message (chat ${f.chat_id}, message ${f.message_id}) is ignored: ${why}; the card goes out as a new message`,
    };
  }
}
