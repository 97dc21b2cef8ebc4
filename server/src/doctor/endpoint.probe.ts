import { SECRET_HEADER } from '@stickers/shared';

/** How the landing's endpoint answered an empty request: its HTTP status, or why there was no answer. */
export type EndpointAnswer = { status: number; error?: undefined } | { status?: undefined; error: string };

const TIMEOUT_MS = 5000;

/**
 * Posts what the landing posts, minus the lead: an empty JSON object with the secret, to LEADS_ENDPOINT. A server
 * that takes the landing's requests answers 422 (fields missing) and stores nothing.
 */
export async function probeEndpoint(url: string, secret: string): Promise<EndpointAnswer> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', [SECRET_HEADER]: secret },
      body: '{}',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    await res.arrayBuffer();
    return { status: res.status };
  } catch (err) {
    const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
    if (e.name === 'TimeoutError') return { error: `no answer within ${TIMEOUT_MS / 1000} s` };
    return { error: e.cause?.code ?? e.cause?.message ?? e.message ?? String(err) };
  }
}
