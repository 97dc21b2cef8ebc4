import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * A local stand-in for the captcha providers the landing supports (Cloudflare Turnstile, Yandex SmartCaptcha,
 * hCaptcha), mounted in the sandbox under `/captcha/`: a widget script per provider and a verify endpoint that speaks
 * the provider's request and answer shapes. The widget is a visible "Я не робот" checkbox; ticking it asks the
 * stand-in for a token and writes it into the provider's hidden form field. The verify endpoint accepts a token it
 * issued, once, for the same provider; anything else is rejected as the provider would. Faults on demand: 503, an
 * answer that never comes, an answer that is not JSON.
 *
 * - `GET /captcha/<provider>/api.js`: the widget script (`?render=explicit&onload=fn` as the real scripts take it;
 *   without `render=explicit` it renders into every element of the provider's class once the page is parsed).
 * - `POST /captcha/token`: a new token (`{ "token": … }`), for the widget; any origin may ask.
 * - `POST /captcha/<provider>/verify`: `application/x-www-form-urlencoded`, the provider's fields.
 * - `POST /captcha/api/fault` `{ "verify": "unavailable" | "hang" | "garbage" | null }`: how the verify endpoint
 *   answers from now on (null: normally). `GET /captcha/api/verifications`: every verify request taken, its fields.
 *   `POST /captcha/api/reset`: no fault, no tokens, no record.
 */

export const CAPTCHA_STAND_IN_PROVIDERS = {
  turnstile: {
    global: 'turnstile',
    widgetClass: 'cf-turnstile',
    tokenField: 'cf-turnstile-response',
    tokenParam: 'response',
    ipParam: 'remoteip',
  },
  smartcaptcha: { global: 'smartCaptcha', widgetClass: 'smart-captcha', tokenField: 'smart-token', tokenParam: 'token', ipParam: 'ip' },
  hcaptcha: { global: 'hcaptcha', widgetClass: 'h-captcha', tokenField: 'h-captcha-response', tokenParam: 'response', ipParam: 'remoteip' },
} as const;
export type CaptchaStandInProvider = keyof typeof CAPTCHA_STAND_IN_PROVIDERS;

/** How the verify endpoint answers: 503, never, or 200 with HTML instead of JSON; null: as the provider would. */
export type CaptchaVerifyFault = 'unavailable' | 'hang' | 'garbage' | null;
const FAULTS: readonly CaptchaVerifyFault[] = ['unavailable', 'hang', 'garbage', null];

/** A verify request the stand-in took: the provider it was sent to and its form fields. */
export interface CaptchaVerification {
  provider: CaptchaStandInProvider;
  params: Record<string, string>;
}

const isProvider = (name: string): name is CaptchaStandInProvider => Object.prototype.hasOwnProperty.call(CAPTCHA_STAND_IN_PROVIDERS, name);

async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export class CaptchaStandIn {
  /** Tokens issued and not yet used, with the provider they were issued for (the script that asked). */
  private readonly issued = new Map<string, CaptchaStandInProvider | null>();
  private readonly hanging = new Set<ServerResponse>();
  fault: CaptchaVerifyFault = null;
  readonly verifications: CaptchaVerification[] = [];

  /** A token the verify endpoint accepts once. */
  issue(provider: CaptchaStandInProvider | null = null): string {
    const token = `stand-in.${randomUUID()}`;
    this.issued.set(token, provider);
    return token;
  }

  reset(): void {
    this.fault = null;
    this.issued.clear();
    this.verifications.length = 0;
    this.releaseHanging();
  }

  /** Ends every verify request held by the `hang` fault (the caller sees the connection close). */
  releaseHanging(): void {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
  }

  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const parts = url.pathname.split('/').filter(Boolean).slice(1);
    const [first, second] = parts;
    if (parts.length === 1 && first === 'token' && req.method === 'POST') {
      const from = url.searchParams.get('provider') ?? '';
      return sendJson(res, 200, { token: this.issue(isProvider(from) ? from : null) }, { 'Access-Control-Allow-Origin': '*' });
    }
    if (parts.length === 2 && first === 'api') return this.handleControl(second, req, res);
    if (parts.length === 2 && isProvider(first) && second === 'api.js' && req.method === 'GET') {
      const script = widgetScript(first);
      res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end(script);
      return;
    }
    if (parts.length === 2 && isProvider(first) && second === 'verify' && req.method === 'POST') return this.verify(first, req, res);
    sendJson(res, 404, { error: 'not found' });
  }

  private async handleControl(what: string | undefined, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (what === 'verifications' && req.method === 'GET') return sendJson(res, 200, { verifications: this.verifications });
    if (req.method !== 'POST') return sendJson(res, 404, { error: 'not found' });
    if (what === 'reset') {
      this.reset();
      return sendJson(res, 200, { ok: true });
    }
    if (what !== 'fault') return sendJson(res, 404, { error: 'not found' });
    if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) return sendJson(res, 415, { error: 'send application/json' });
    let body: unknown;
    try {
      body = JSON.parse(await readText(req));
    } catch {
      return sendJson(res, 400, { error: 'the body is not JSON' });
    }
    const verify = (body as { verify?: unknown } | null)?.verify;
    if (!FAULTS.includes(verify as CaptchaVerifyFault)) {
      return sendJson(res, 400, { error: '"verify" must be one of "unavailable", "hang", "garbage" or null' });
    }
    this.fault = verify as CaptchaVerifyFault;
    if (this.fault !== 'hang') this.releaseHanging();
    return sendJson(res, 200, { ok: true, verify: this.fault });
  }

  private async verify(provider: CaptchaStandInProvider, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readText(req);
    const form = /^application\/x-www-form-urlencoded\b/i.test(req.headers['content-type'] ?? '') ? new URLSearchParams(text) : null;
    const params = form ? Object.fromEntries(form) : {};
    this.verifications.push({ provider, params });
    if (this.fault === 'hang') {
      this.hanging.add(res);
      res.once('close', () => this.hanging.delete(res));
      return;
    }
    if (this.fault === 'unavailable') {
      res.writeHead(503, { 'Content-Type': 'text/plain' });
      res.end('Service Unavailable');
      return;
    }
    if (this.fault === 'garbage') {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end('<html><body>maintenance</body></html>');
      return;
    }
    const spec = CAPTCHA_STAND_IN_PROVIDERS[provider];
    const secret = params.secret ?? '';
    const token = params[spec.tokenParam] ?? '';
    const problem = !secret ? 'missing-input-secret' : !token ? 'missing-input-response' : this.take(token, provider);
    if (provider === 'smartcaptcha') {
      // SmartCaptcha: `{status: "ok" | "failed", message, host}`.
      return sendJson(
        res,
        200,
        problem ? { status: 'failed', message: problem, host: '' } : { status: 'ok', message: '', host: '127.0.0.1' },
      );
    }
    // Turnstile and hCaptcha: `{success, "error-codes", …}`.
    return sendJson(
      res,
      200,
      problem
        ? { success: false, 'error-codes': [problem] }
        : { success: true, 'error-codes': [], challenge_ts: new Date().toISOString(), hostname: '127.0.0.1' },
    );
  }

  /** Uses an issued token up: null when it was good for this provider, else the provider's error code. */
  private take(token: string, provider: CaptchaStandInProvider): string | null {
    if (!this.issued.has(token)) return 'invalid-input-response';
    const issuedFor = this.issued.get(token);
    this.issued.delete(token);
    return issuedFor === null || issuedFor === provider ? null : 'invalid-input-response';
  }
}

/**
 * The widget script of `provider`: the provider's global (`turnstile`, `smartCaptcha`, `hcaptcha`) with `render`,
 * `reset`, `getResponse` and `remove`, a visible checkbox in the container, the token in the provider's hidden field.
 */
export function widgetScript(provider: CaptchaStandInProvider): string {
  const spec = CAPTCHA_STAND_IN_PROVIDERS[provider];
  return `(function () {
  var script = document.currentScript;
  var src = new URL(script ? script.src : location.href);
  var tokenUrl = src.origin + '/captcha/token?provider=${provider}';
  var widgets = [];
  function widgetOf(id) { return widgets[id === undefined ? 0 : id] || null; }
  function render(container, params) {
    var el = typeof container === 'string' ? document.querySelector(container) : container;
    if (!el) throw new Error('${spec.global}: no container');
    params = params || {};
    var id = widgets.length;
    var box = document.createElement('label');
    box.className = 'captcha-stand-in';
    box.setAttribute('data-captcha-stand-in', '${provider}');
    var check = document.createElement('input');
    check.type = 'checkbox';
    box.appendChild(check);
    box.appendChild(document.createTextNode(' Я не робот (проверка-заглушка)'));
    var field = document.createElement('input');
    field.type = 'hidden';
    field.name = '${spec.tokenField}';
    field.value = '';
    el.appendChild(box);
    el.appendChild(field);
    var widget = { el: el, box: box, check: check, field: field, params: params };
    widgets.push(widget);
    check.addEventListener('change', function () {
      if (!check.checked) { field.value = ''; return; }
      check.disabled = true;
      fetch(tokenUrl, { method: 'POST' }).then(function (r) { return r.json(); }).then(function (answer) {
        field.value = answer.token;
        check.disabled = false;
        box.setAttribute('data-state', 'passed');
        if (typeof params.callback === 'function') params.callback(answer.token);
      }, function () {
        check.checked = false;
        check.disabled = false;
        box.setAttribute('data-state', 'error');
      });
    });
    return id;
  }
  function reset(id) {
    var w = widgetOf(id);
    if (!w) return;
    w.field.value = '';
    w.check.checked = false;
    w.box.removeAttribute('data-state');
  }
  function getResponse(id) { var w = widgetOf(id); return w ? w.field.value : ''; }
  function remove(id) { var w = widgetOf(id); if (w) { w.box.remove(); w.field.remove(); widgets[id === undefined ? 0 : id] = null; } }
  window['${spec.global}'] = { render: render, reset: reset, getResponse: getResponse, remove: remove, destroy: remove, execute: function () {} };
  function implicit() {
    var found = document.querySelectorAll('.${spec.widgetClass}');
    for (var i = 0; i < found.length; i++) render(found[i], { sitekey: found[i].getAttribute('data-sitekey') });
  }
  if (src.searchParams.get('render') !== 'explicit' && src.searchParams.get('render') !== 'onload') {
    if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', implicit); else implicit();
  }
  var onload = src.searchParams.get('onload');
  if (onload && typeof window[onload] === 'function') window[onload]();
})();
`;
}
