import type { Context } from 'telegraf';

/** What a bot update handler receives, named here so that telegraf stays in this folder. */
export type BotContext = Context;

/** Telegraf drops a path prefix of apiRoot unless it ends with "/": every telegraf client uses this. */
export function telegrafApiRoot(apiRoot: string): string {
  return apiRoot.endsWith('/') ? apiRoot : `${apiRoot}/`;
}
