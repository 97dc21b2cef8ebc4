import { DEFAULT_USER, signInitData, type SandboxUser, type TelegramSandbox } from '@stickers/telegram-sandbox';
import { SECRET_HEADER } from '@stickers/shared';
import { SECRET, type TestServer } from '../harness';

/** An answer of the API: the status, the body as JSON when it is JSON (else null), the text and the headers. */
export interface ApiAnswer {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

/** Launch data for `user`, signed now (by the server's clock) with the sandbox's token. */
export function launch(server: TestServer, sandbox: TelegramSandbox, user: SandboxUser = DEFAULT_USER): string {
  return signInitData({ botToken: sandbox.token, user, authDate: Math.floor(server.clock.now() / 1000) });
}

async function answer(res: Response): Promise<ApiAnswer> {
  const text = await res.text();
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
  const res = await fetch(`${server.url}/inbox/api/${path}`, {
    method: o.method ?? 'GET',
    headers: {
      Authorization: `tma ${launch(server, sandbox, o.user)}`,
      ...(o.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
    },
    ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}),
  });
  return answer(res);
}

/** A call to a route behind the secret (`GET /leads`, the CSV export). */
export async function secretGet(server: TestServer, path: string): Promise<ApiAnswer> {
  return answer(await fetch(`${server.url}${path}`, { headers: { [SECRET_HEADER]: SECRET } }));
}
