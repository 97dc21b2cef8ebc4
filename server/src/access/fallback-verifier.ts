import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { LateFallbackInfo, LateInfo } from '@stickers/shared';
import { SERVER_CONFIG } from '../config/config.module';

/**
 * The signature of a fallback claim (`late.fallback.sig`), as the landing makes it: key = SHA-256 of the UTF-8 text
 * `"stickers-leads fallback\n" + TELEGRAM_BOT_TOKEN`; sig = base64url without padding of HMAC-SHA256(key,
 * `${request_id}\n${chat_id}\n${message_id}`), `chat_id` the text sent in `late.fallback.chat_id`, `message_id` in
 * decimal. Only the bot's token holder can make it: the landing, whose bot sent the fallback message.
 */
export function fallbackSignature(botToken: string, requestId: string, chatId: string, messageId: number): string {
  const key = createHash('sha256').update(`stickers-leads fallback\n${botToken}`, 'utf8').digest();
  return createHmac('sha256', key).update(`${requestId}\n${chatId}\n${messageId}`, 'utf8').digest('base64url');
}

/** What the decision gets: the late request with its fallback claim kept only when signed, and why not otherwise. */
export interface ScreenedLate {
  late: LateInfo | null;
  /** The trace's note when a claim was dropped (no personal data: chat and message ids, the reason); else null. */
  ignored: string | null;
}

/**
 * Fallback claims must be signed (docs/decisions.md): `LEADS_SECRET` lets a caller store leads, not make the bot edit
 * or answer any message it names. An unsigned or badly signed claim is dropped before the decision; the trace says why.
 */
@Injectable()
export class FallbackVerifier {
  constructor(@Inject(SERVER_CONFIG) private readonly config: { telegram: { token: string | null } }) {}

  /** Whether the claim is signed with this server's bot token for this request. Compared in constant time. */
  verified(requestId: string, fallback: LateFallbackInfo): boolean {
    const token = this.config.telegram.token;
    if (!token || fallback.sig === undefined) return false;
    const expected = Buffer.from(fallbackSignature(token, requestId, fallback.chat_id, fallback.message_id));
    const given = Buffer.from(fallback.sig);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  /** The late request to decide with: unchanged when it has no claim or a signed one; else without the claim. */
  screen(requestId: string, late: LateInfo | null): ScreenedLate {
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
