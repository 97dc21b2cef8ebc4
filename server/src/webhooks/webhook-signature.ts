import { createHmac } from 'node:crypto';

/** The header that signs each delivery (docs/api.md, "Webhooks"), Stripe's scheme. */
export const SIGNATURE_HEADER = 'Stickers-Signature';

/**
 * `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`: the receiver recomputes the HMAC over the exact
 * bytes it got, compares in constant time, and refuses a `t` more than 5 minutes from its own clock (a replayed
 * request).
 */
export function signatureHeader(secret: string, unixSeconds: number, body: string): string {
  const v1 = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${v1}`;
}
