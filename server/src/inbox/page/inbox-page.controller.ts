import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Controller, Get, Inject, Param, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { SERVER_CONFIG } from '../../config/config.module';
import type { ServerConfig } from '../../config/config';

/** The built page's folder, `public/` beside this compiled module; from sources (jest) there is none and the page answers 503. */
export const INBOX_PAGE_DIR = Symbol('INBOX_PAGE_DIR');
export const inboxPageDir = { provide: INBOX_PAGE_DIR, useValue: join(__dirname, 'public') };

/** Nothing but this deployment's own files. No frame-ancestors: Telegram's web clients frame the page. */
const PAGE_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; object-src 'none'";

const NOT_BUILT_HTML =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Inbox unavailable</title></head>' +
  '<body><h1>The inbox page is not built</h1><p>Run <code>npm run build -w server</code> and restart the server.</p></body></html>';

/** The local sandbox's page (it launches the page with signed launch data) when TELEGRAM_API_ROOT is on the loopback. */
export function sandboxPageOf(apiRoot: string): string | null {
  if (!URL.canParse(apiRoot)) return null;
  const url = new URL(apiRoot);
  return ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname) ? new URL('/', url).toString() : null;
}

/** The page's title before its script names it (as texts-ru.ts and texts-en.ts do). */
const TITLES: Record<ServerConfig['locale'], string> = { ru: 'Заявки', en: 'Leads' };
const attribute = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** `GET /inbox` (the HTML) and `GET /inbox/assets/:file`: not API operations, so out of the OpenAPI document. */
@ApiExcludeController()
@Controller('inbox')
export class InboxPageController {
  /** In development, a `<meta name="inbox-sandbox">` naming the sandbox's page, for the page opened without launch data. */
  private readonly sandboxMeta: string;
  private readonly assetsDir: string;
  private readonly indexFile: string;
  /** The HTML, read once it exists (`npm run dev` builds the page after the server's first compile, which empties `dist`). */
  private html: string | null = null;
  /** LEADS_LOCALE: the page's `lang`, so that what it says before the API answers (a refusal) is in the deployment's language. */
  private readonly locale: ServerConfig['locale'];

  constructor(@Inject(INBOX_PAGE_DIR) dir: string, @Inject(SERVER_CONFIG) config: ServerConfig) {
    this.assetsDir = join(dir, 'assets');
    this.indexFile = join(dir, 'index.html');
    const sandbox = sandboxPageOf(config.telegram.apiRoot);
    this.sandboxMeta = sandbox ? `<meta name="inbox-sandbox" content="${attribute(sandbox)}" />` : '';
    this.locale = config.locale;
  }

  @Get()
  index(@Res() res: Response): void {
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('Content-Security-Policy', PAGE_POLICY);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    if (this.html === null && existsSync(this.indexFile)) this.html = readFileSync(this.indexFile, 'utf8');
    if (this.html === null) res.status(503).type('html').send(NOT_BUILT_HTML);
    else
      res
        .type('html')
        .send(
          this.html
            .replace('<html lang="ru">', `<html lang="${this.locale}">`)
            .replace('<title>Заявки</title>', `<title>${TITLES[this.locale]}</title>`)
            .replace('</head>', `${this.sandboxMeta}</head>`),
        );
  }

  /** Asset names carry their content's hash (the build's), so a browser may keep them for a year. */
  @Get('assets/:file')
  asset(@Param('file') file: string, @Res() res: Response): void {
    res.sendFile(file, { root: this.assetsDir, dotfiles: 'deny', immutable: true, maxAge: '365d' }, (err) => {
      if (err && !res.headersSent) res.status(404).json({ error: 'not_found' });
    });
  }
}
