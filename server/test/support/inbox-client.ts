import request, { type Response } from 'supertest';
import { DEFAULT_USER, signInitData, type SandboxUser, type TelegramSandbox } from '@stickers/telegram-sandbox';
import { SECRET_HEADER } from '@stickers/shared';
import { SECRET, type TestServer } from '../harness';

/** An answer of the API: the status, the body as JSON when it is JSON (else null), the text and the headers. */
export interface ApiAnswer {
  status: number;
  body: any;
  text: string;
  headers: Record<string, string>;
}

/** Launch data for `user`, signed now (by the server's clock) with the sandbox's token. */
export function launch(server: TestServer, sandbox: TelegramSandbox, user: SandboxUser = DEFAULT_USER): string {
  return signInitData({ botToken: sandbox.token, user, authDate: Math.floor(server.clock.now() / 1000) });
}

function answer(res: Response): ApiAnswer {
  const { text } = res;
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    /* CSV */
  }
  return { status: res.status, body, text, headers: res.headers };
}

/** A call to `/inbox/api/<path>` as `user` (the sandbox's default user, the leads chat's creator, unless told). */
export async function inboxCall(
  server: TestServer,
  sandbox: TelegramSandbox,
  path: string,
  o: { user?: SandboxUser; method?: string; body?: unknown } = {},
): Promise<ApiAnswer> {
  const http = request(server.app.getHttpServer());
  const url = `/inbox/api/${path}`;
  const method = o.method ?? 'GET';
  if (method !== 'GET' && method !== 'POST') throw new Error(`inboxCall: no ${method} route in the inbox API`);
  const call = method === 'POST' ? http.post(url) : http.get(url);
  call.set('Authorization', `tma ${launch(server, sandbox, o.user)}`);
  if (o.body !== undefined) call.set('Content-Type', 'application/json').send(JSON.stringify(o.body));
  return answer(await call);
}

/** A call to a route behind the secret (`GET /leads`, the CSV export). */
export async function secretGet(server: TestServer, path: string): Promise<ApiAnswer> {
  return answer(await request(server.app.getHttpServer()).get(path).set(SECRET_HEADER, SECRET));
}
