import { request as httpRequest, type ClientRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { SandboxState, Update, Webhook, WebhookDelivery } from './state';

export interface WebhookOptions {
  /** How long the webhook has to answer a delivery before it counts as failed. */
  timeoutMs: number;
  /** The wait after a failed delivery before the same update is tried again. */
  retryMs: number;
  /** Runs a Bot API call the bot made in its answer to a delivery (`{"method": ..., ...params}`), as Telegram does. */
  reply: (method: string, params: Record<string, unknown>) => void;
}

interface Attempt {
  req: ClientRequest;
  record: WebhookDelivery;
  timer: NodeJS.Timeout;
}

/** Telegram's words for a failed connection, as getWebhookInfo's last_error_message gives them. */
function describe(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'Connection refused';
    case 'ECONNRESET':
      return 'Connection reset by peer';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'Failed to resolve host: Name or service not known';
    default:
      return err.message;
  }
}

/**
 * Delivers the queued updates to the webhook as Telegram does: one at a time, in update_id order, each until the
 * webhook answers 2xx. A failure (another status, no connection, no answer in time) is noted in getWebhookInfo's
 * last_error_* and the same update is tried again after `retryMs`, for as long as that webhook stays set.
 */
export class WebhookSender {
  private attempt: Attempt | null = null;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly state: SandboxState,
    private readonly options: WebhookOptions,
  ) {
    state.on('update', this.pump);
    state.on('webhook', this.restart);
    this.pump();
  }

  /** Stops delivering for good: the request in flight is dropped and no retry is left behind. */
  close(): void {
    this.state.off('update', this.pump);
    this.state.off('webhook', this.restart);
    this.cancel('sandbox stopped');
  }

  /** The webhook was set, changed or deleted (or the sandbox reset): what was under way was for the old one. */
  private readonly restart = () => {
    this.cancel('webhook changed or deleted');
    this.pump();
  };

  private cancel(why: string): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const attempt = this.attempt;
    if (!attempt) return;
    this.attempt = null;
    clearTimeout(attempt.timer);
    attempt.record.error = `Cancelled: ${why}`;
    attempt.req.destroy();
  }

  private readonly pump = () => {
    const hook = this.state.webhook;
    if (!hook || this.attempt || this.retryTimer) return;
    const update = this.state.updates[0];
    if (update) this.post(hook, update);
  };

  private post(hook: Webhook, update: Update): void {
    const body = JSON.stringify(update);
    const headers: Record<string, string | number> = { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) };
    if (hook.secret_token) headers['X-Telegram-Bot-Api-Secret-Token'] = hook.secret_token;
    const url = new URL(hook.url);
    // A connection per delivery (no keep-alive agent): nothing is left open to the bot once the sandbox stops.
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method: 'POST', headers, agent: false });
    const record: WebhookDelivery = { url: hook.url, update_id: update.update_id, at: Date.now(), status: 0 };
    this.state.recordDelivery(record);
    const attempt: Attempt = {
      req,
      record,
      timer: setTimeout(() => {
        this.settle(attempt, hook, 0, 'Read timeout expired', null);
        req.destroy();
      }, this.options.timeoutMs),
    };
    this.attempt = attempt;

    const failed = (err: NodeJS.ErrnoException) => this.settle(attempt, hook, 0, describe(err), null);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', failed);
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) this.settle(attempt, hook, status, null, Buffer.concat(chunks));
        else this.settle(attempt, hook, status, `Wrong response from the webhook: ${status} ${res.statusMessage ?? ''}`.trimEnd(), null);
      });
    });
    req.on('error', failed);
    req.end(body);
  }

  private settle(attempt: Attempt, hook: Webhook, status: number, error: string | null, answer: Buffer | null): void {
    // A cancelled attempt was for a webhook that is gone; its outcome changes nothing.
    if (this.attempt !== attempt) return;
    this.attempt = null;
    clearTimeout(attempt.timer);
    attempt.record.status = status;
    if (error !== null) {
      attempt.record.error = error;
      this.state.webhookFailed(hook, error);
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        this.pump();
      }, this.options.retryMs);
      return;
    }
    this.state.delivered(attempt.record.update_id);
    if (answer) this.runReply(answer);
    this.pump();
  }

  /** A bot may answer a delivery with one Bot API call (telegraf does for answerCallbackQuery); Telegram runs it. */
  private runReply(answer: Buffer): void {
    let call: unknown;
    try {
      call = JSON.parse(answer.toString('utf8'));
    } catch {
      return; // Any body is a fine answer; only a JSON call is run.
    }
    if (!call || typeof call !== 'object' || typeof (call as { method?: unknown }).method !== 'string') return;
    const { method, ...params } = call as { method: string } & Record<string, unknown>;
    this.options.reply(method, params);
  }
}
