import { Inject, Injectable } from '@nestjs/common';

/** How long a delivery may take before it counts as failed: 10 s; tests shorten it through this provider. */
export interface WebhookTimeout {
  ms: number;
}
export const WEBHOOK_TIMEOUT = Symbol('WebhookTimeout');
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;

/** A 2xx (success), or why not: another status (`answered`), a network error or no answer in time (not `answered`). */
export type WebhookAnswer = { ok: true; status: number } | { ok: false; answered: boolean; error: string };

const USER_AGENT = 'stickers-leads-webhooks/1';

/**
 * The webhooks' gateway: every HTTP call to an endpoint. One POST, redirects not followed (a 3xx is a failure like
 * any other non-2xx), the answer's body not read, the whole exchange cut off after the timeout.
 */
@Injectable()
export class WebhookSender {
  constructor(@Inject(WEBHOOK_TIMEOUT) private readonly timeout: WebhookTimeout) {}

  async post(url: string, body: string, headers: Record<string, string>): Promise<WebhookAnswer> {
    const ms = this.timeout.ms;
    const signal = AbortSignal.timeout(ms);
    try {
      const res = await fetch(url, {
        method: 'POST',
        body,
        headers: { 'Content-Type': 'application/json', 'User-Agent': USER_AGENT, ...headers },
        redirect: 'manual',
        signal,
      });
      await res.body?.cancel().catch(() => undefined);
      if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status };
      return { ok: false, answered: true, error: `HTTP ${res.status}` };
    } catch (err) {
      if (signal.aborted) return { ok: false, answered: false, error: `no answer within ${ms / 1000} s` };
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      return {
        ok: false,
        answered: false,
        error: `network error: ${cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err))}`,
      };
    }
  }
}
