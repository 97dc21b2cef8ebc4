import { createHmac } from 'node:crypto';
import type { WebhookEndpoint } from '../config/webhook-endpoints';

/** The header that signs each delivery (docs/api.md, "Webhooks"), Stripe's scheme. */
export const SIGNATURE_HEADER = 'Stickers-Signature';

/**
 * `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`, one `v1=` per secret (the current one first; the
 * previous one too during a rotation): the receiver recomputes the HMAC over the exact bytes it got with the secret it
 * holds, accepts when any `v1` matches (compared in constant time), and refuses a `t` more than 5 minutes from its own
 * clock (a replayed request).
 */
export function signatureHeader(secrets: readonly string[], unixSeconds: number, body: string): string {
  const v1s = secrets.map((secret) => `v1=${createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')}`);
  return [`t=${unixSeconds}`, ...v1s].join(',');
}

/** What signs a delivery to `endpoint`: its secret, then the previous one while it is being rotated. */
export function signingSecrets(endpoint: WebhookEndpoint): string[] {
  return endpoint.previousSecret === undefined ? [endpoint.secret] : [endpoint.secret, endpoint.previousSecret];
}
