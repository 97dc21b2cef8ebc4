/**
 * The lead form posted to the route's action with a real Request, as a browser sends it. Apart from support.ts so that
 * tests of the landing's parts do not load the route. Not a test file: vite.config.ts collects only `*.test.ts`.
 */
import { getEnv } from '~/env.server';
import { signStartedAt } from '~/leads/started-at.server';
import { action } from '~/routes/_index';

export interface FormPost {
  /** What the visitor typed (name, telegram, phone, …). */
  values: Record<string, string>;
  /** Fields set over everything else (a filled honeypot, another requestId or startedAt, …). */
  fields?: Record<string, string>;
  /** Fields left out of the post altogether (`requestId`: a page whose hidden field went missing). */
  without?: string[];
  requestId?: string;
  /** The form token; by default one signed 4 s ago for the request id the form carries. */
  startedAt?: string;
  /** The address the request's socket comes from. */
  socket?: string;
  forwardedFor?: string;
}

/**
 * Posts the form (the honeypot empty) and resolves with the request id it carried (null when left out), the action's data and headers, and
 * `before`: the time just before the action was called.
 */
export async function postForm({
  values,
  fields = {},
  without = [],
  requestId = crypto.randomUUID(),
  startedAt,
  socket = '127.0.0.1',
  forwardedFor,
}: FormPost) {
  const form = new URLSearchParams({
    ...values,
    company: '',
    startedAt: startedAt ?? signStartedAt(Date.now() - 4000, fields.requestId ?? requestId, getEnv().signingKey),
    requestId,
    ...fields,
  });
  for (const name of without) form.delete(name);
  const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded' };
  if (forwardedFor !== undefined) headers['X-Forwarded-For'] = forwardedFor;
  const request = new Request('http://landing.test/?index', { method: 'POST', headers, body: form });
  const before = Date.now();
  const response = (await action({ request, context: { clientAddress: socket }, params: {} })) as {
    data: any;
    init?: { headers?: Record<string, string> };
  };
  return { requestId: form.get('requestId') as string, result: response.data, headers: response.init?.headers ?? {}, before };
}
